//! CPU lists from `/sys/devices/system/cpu`.

use crate::error::CaptureError;

/// Parses a kernel CPU list such as `0-3,5,7-8`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|part| !part.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let first: u32 = first.parse().ok()?;
                let last: u32 = last.parse().ok()?;
                if last < first {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

fn read_list(path: &str) -> Result<Vec<u32>, CaptureError> {
    let text = std::fs::read_to_string(path).map_err(|error| CaptureError::System {
        path: path.into(),
        reason: error.to_string(),
    })?;
    parse_cpu_list(&text)
        .filter(|cpus| !cpus.is_empty())
        .ok_or_else(|| CaptureError::System {
            path: path.into(),
            reason: format!("not a CPU list: {:?}", text.trim()),
        })
}

/// The online CPUs: one perf event each.
pub fn online() -> Result<Vec<u32>, CaptureError> {
    read_list("/sys/devices/system/cpu/online")
}

/// The number of possible CPUs: per-CPU map values have one slot each.
pub fn possible_count() -> Result<usize, CaptureError> {
    let cpus = read_list("/sys/devices/system/cpu/possible")?;
    Ok(cpus.iter().max().map_or(1, |&max| max as usize + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("0,2-4,7"), Some(vec![0, 2, 3, 4, 7]));
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }
}
