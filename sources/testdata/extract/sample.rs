//! Crate docs.

use std::fmt;
use std::collections::HashMap;

/// A point.
#[derive(Debug, Clone)]
pub struct Point<'a> {
    name: &'a str,
    x: i32,
}

impl<'a> fmt::Display for Point<'a> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let brace = '{';
        let raw = r#"a "quoted" }"#;
        write!(f, "{} {} {}", self.name, brace, raw)
    }
}

pub fn lookup<'a>(m: &HashMap<&'a str, i32>, k: &str) -> Option<i32>
where
    'a: 'static,
{
    m.get(k).copied()
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

const MAX: usize = 10;
static NAME: &str = "n";

#[cfg(test)]
mod tests {
    #[test]
    fn works() {
        assert_eq!(2 + 2, 4);
    }
}
