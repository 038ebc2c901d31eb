package main

import (
	"crypto/sha256"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hashBlocks(buf []byte) [32]byte {
	var h [32]byte
	for i := 0; i < 2000; i++ {
		h = sha256.Sum256(append(buf[:0:0], h[:]...))
	}
	return h
}

//go:noinline
func sortish(n int) int {
	a := make([]int, n)
	for i := range a {
		a[i] = (i * 7919) % n
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j-1] > a[j]; j-- {
			a[j-1], a[j] = a[j], a[j-1]
		}
	}
	return a[0]
}

func main() {
	secs, _ := strconv.Atoi(os.Args[1])
	end := time.Now().Add(time.Duration(secs) * time.Second)
	buf := make([]byte, 64)
	for time.Now().Before(end) {
		hashBlocks(buf)
		sortish(3000)
	}
}
