function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function hashLoop(n) { let h = 0; for (let i = 0; i < n; i++) { h = (h * 31 + i) | 0; } return h; }
const end = Date.now() + 1000 * Number(process.argv[2] || 90);
let s = 0;
while (Date.now() < end) { s += fib(25); s += hashLoop(2e6); }
console.log(s);
