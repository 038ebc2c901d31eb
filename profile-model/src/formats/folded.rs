//! Folded stacks (`root;…;leaf COUNT`, as flamegraph.pl's `stackcollapse-*`, inferno,
//! async-profiler's collapsed output and py-spy's `--format raw` write them) read
//! into a profile: one sample per line, frames by name, the count in [`FoldedUnit`].

use super::builder::{Builder, FrameName};
use super::{FoldedUnit, FormatError};
use crate::profile::Profile;

/// Reads folded stacks. Blank lines and comment lines (`#`, `//`) are passed over; a
/// line of frames without a whole-number count after its last space is an error
/// naming the line (the first such: [`FormatError::NotAProfile`]); a count alone after a space is a sample without frames (py-spy's
/// idle threads). Equal stacks on several lines add up.
pub fn decode(text: &str, unit: FoldedUnit) -> Result<Profile, FormatError> {
    let mut b = Builder::new(&[unit.sample_type()], 1, text.len());
    let mut stack = Vec::new();
    let mut lines = 0usize;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let start = line.trim_start();
        if start.is_empty() || start.starts_with('#') || start.starts_with("//") {
            continue;
        }
        // A first line that is not `frames COUNT` says the file is no folded stacks.
        let bad = |why: &str| {
            let (line, message) = (n + 1, format!("{why}: `{}`", shortened(line)));
            if lines == 0 {
                FormatError::NotAProfile { line, message }
            } else {
                FormatError::Folded { line, message }
            }
        };
        let (frames, count) = line
            .rsplit_once(|c: char| c.is_ascii_whitespace())
            .ok_or_else(|| bad("no count after the stack"))?;
        let count: i64 = count.parse().map_err(|_| {
            bad(if count.parse::<f64>().is_ok() {
                "the count is not a whole number"
            } else {
                "no count after the stack"
            })
        })?;
        // An empty stack (py-spy's idle threads) is a sample without frames.
        stack.clear();
        let frames = frames.trim();
        if !frames.is_empty() {
            for name in frames.split(';') {
                stack.push(b.location(FrameName::named(name)));
            }
        }
        stack.reverse();
        b.push(&stack, &[count], 0)?;
        lines += 1;
    }
    if lines == 0 {
        return Err(FormatError::Folded {
            line: 0,
            message: "no stack in the file".into(),
        });
    }
    Ok(b.finish())
}

/// `line` cut to 80 characters, for an error message.
fn shortened(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stacks(p: &Profile) -> Vec<(Vec<String>, i64)> {
        (0..p.samples.len())
            .map(|i| {
                let names = p.samples.stack(i).iter().rev().map(|l| {
                    let f = p.locations[*l as usize].lines[0].function;
                    p.str(p.functions[f as usize].name).to_string()
                });
                (names.collect(), p.samples.values[0][i])
            })
            .collect()
    }

    #[test]
    fn lines_become_samples_root_first_with_their_counts() {
        let p = decode(
            "a;b;c 3\r\n\n# note\na;b 2\nx y;z 1\n 4\n",
            FoldedUnit::Samples,
        )
        .expect("folded");
        assert_eq!(
            stacks(&p),
            [
                (vec!["a".into(), "b".into(), "c".into()], 3),
                (vec!["a".into(), "b".into()], 2),
                (vec!["x y".into(), "z".into()], 1),
                (vec![], 4),
            ]
        );
        assert_eq!(p.sample_type_names(), ["samples/count"]);
        assert_eq!(p.functions.len(), 5, "a, b, c, x y, z once each");
    }

    #[test]
    fn the_unit_names_the_sample_type() {
        let p = decode("a 1\n", FoldedUnit::Nanoseconds).expect("folded");
        assert_eq!(p.sample_type_names(), ["cpu/nanoseconds"]);
        let p = decode("a 1\n", FoldedUnit::Bytes).expect("folded");
        assert_eq!(p.sample_type_names(), ["space/bytes"]);
    }

    #[test]
    fn a_line_without_a_count_is_an_error_naming_it() {
        let e = decode("a;b 1\na;b;c\n", FoldedUnit::Samples).expect_err("no count");
        assert_eq!(
            e.to_string(),
            "folded stacks, line 2: no count after the stack: `a;b;c`"
        );
        let e = decode("a;b 1\na;b 1.5\n", FoldedUnit::Samples).expect_err("fraction");
        assert!(
            e.to_string()
                .contains("line 2: the count is not a whole number"),
            "{e}"
        );
        let e = decode("# notes\nhello there\n", FoldedUnit::Samples).expect_err("text");
        assert_eq!(
            e.to_string(),
            "not a pprof profile nor folded stacks (line 2: no count after the stack: `hello there`)"
        );
        let e = decode("# only a comment\n", FoldedUnit::Samples).expect_err("empty");
        assert_eq!(e.to_string(), "folded stacks: no stack in the file");
    }
}
