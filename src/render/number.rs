//! Number formatting for human output: significant digits, exponents, inf and nan.

use std::fmt::{self, Write as _};

/// How many significant digits human output shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// At most this many significant digits (at least 1).
    Digits(usize),
    /// The shortest text that reads back as the same f64.
    Full,
}

impl Default for Precision {
    /// 10 significant digits.
    fn default() -> Precision {
        Precision::Digits(10)
    }
}

/// 2^53: every integer of at most this magnitude is an f64 exactly.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// Formats `value` for people: integers up to 2^53 in full; `inf`, `-inf`, `nan`; `-0` as `0`
/// (but as `-0` with [`Precision::Full`], whose text reads back as the same f64); trailing zeros
/// trimmed; plain decimal for magnitudes in [1e-6, 1e15) and exponent form
/// (`3.3554432e-18`) outside it, so a non-zero value is never shown as 0.
pub fn format_number(value: f64, precision: Precision) -> String {
    let mut text = String::new();
    let _ = write_number(&mut text, value, precision);
    text
}

/// Writes [`format_number`]'s text to `out`, without allocating when it has
/// fewer than [`STACK_DIGITS`] significant digits (the digits are formatted
/// in a buffer on the stack).
///
/// Errors: only `out`'s.
pub fn write_number<W: fmt::Write>(out: &mut W, value: f64, precision: Precision) -> fmt::Result {
    if value.is_nan() {
        return out.write_str("nan");
    }
    if value.is_infinite() {
        return out.write_str(if value > 0.0 { "inf" } else { "-inf" });
    }
    if value == 0.0 {
        let negative = value.is_sign_negative() && precision == Precision::Full;
        return out.write_str(if negative { "-0" } else { "0" });
    }
    // An integer that f64 holds exactly (every integer up to 2^53) is shown
    // whole, whatever the precision: `123456789012`, not `1.23456789e11`.
    if value.fract() == 0.0 && value.abs() <= EXACT_INTEGERS {
        return write!(out, "{}", value as i64);
    }
    let mut scientific = Digits::new();
    let written = match precision {
        Precision::Digits(digits) => write!(scientific, "{:.*e}", digits.max(1) - 1, value),
        Precision::Full => write!(scientific, "{value:e}"),
    };
    if written.is_err() {
        // More digits than the stack buffer holds.
        let long = match precision {
            Precision::Digits(digits) => format!("{:.*e}", digits.max(1) - 1, value),
            Precision::Full => format!("{value:e}"),
        };
        return write_scientific(out, value, precision, &long);
    }
    write_scientific(out, value, precision, scientific.as_str())
}

/// The rest of [`write_number`], from `{:e}`'s text of `value`.
fn write_scientific<W: fmt::Write>(
    out: &mut W,
    value: f64,
    precision: Precision,
    scientific: &str,
) -> fmt::Result {
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` output always has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    // The mantissa's digits without the point: `mantissa` is `d` or `d.ddd`.
    let (lead, fraction) = mantissa.split_at(1);
    let fraction = fraction.strip_prefix('.').unwrap_or(fraction);
    let fraction = fraction.trim_end_matches('0');
    let digit_count = 1 + fraction.len();
    let digit = |i: usize| if i == 0 { lead } else { &fraction[i - 1..i] };
    let digits_from = |out: &mut W, from: usize, to: usize| -> fmt::Result {
        for i in from..to {
            out.write_str(digit(i))?;
        }
        Ok(())
    };
    // Plain form pads with zeros past the last digit kept; when rounding dropped
    // non-zero digits there, those zeros would be made up: use exponent form.
    let integer_digits = exponent + 1;
    let made_up_zeros = match precision {
        Precision::Digits(kept) => {
            integer_digits > kept as i32 && {
                let mut rounded = Digits::new();
                let read = write!(rounded, "{sign}{mantissa}e{exponent}")
                    .ok()
                    .and_then(|()| rounded.as_str().parse::<f64>().ok())
                    .or_else(|| format!("{sign}{mantissa}e{exponent}").parse::<f64>().ok());
                read != Some(value)
            }
        }
        Precision::Full => false,
    };
    if !(-6..15).contains(&exponent) || made_up_zeros {
        out.write_str(sign)?;
        out.write_str(lead)?;
        if !fraction.is_empty() {
            out.write_char('.')?;
            out.write_str(fraction)?;
        }
        return write!(out, "e{exponent}");
    }
    out.write_str(sign)?;
    if exponent < 0 {
        out.write_str("0.")?;
        for _ in 0..(-exponent - 1) {
            out.write_char('0')?;
        }
        digits_from(out, 0, digit_count)
    } else {
        let point = exponent as usize + 1;
        if digit_count <= point {
            digits_from(out, 0, digit_count)?;
            for _ in digit_count..point {
                out.write_char('0')?;
            }
            Ok(())
        } else {
            digits_from(out, 0, point)?;
            out.write_char('.')?;
            digits_from(out, point, digit_count)
        }
    }
}

/// Significant digits a number may have for [`write_number`] to format it
/// without allocating (`{:e}` text: sign, digits, point, exponent).
pub const STACK_DIGITS: usize = 48;

/// A text buffer on the stack for `{:e}`: writing past its end is an error.
struct Digits {
    bytes: [u8; STACK_DIGITS + 16],
    len: usize,
}

impl Digits {
    fn new() -> Digits {
        Digits {
            bytes: [0; STACK_DIGITS + 16],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever copied in.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ten(v: f64) -> String {
        format_number(v, Precision::default())
    }

    #[test]
    fn plain_decimals_in_range() {
        assert_eq!(ten(8.0), "8");
        assert_eq!(ten(-0.75), "-0.75");
        assert_eq!(ten(1080.0), "1080");
        assert_eq!(ten(4294967296.0), "4294967296");
        assert_eq!(ten(0.001), "0.001");
        assert_eq!(ten(1e-6), "0.000001");
        assert_eq!(ten(0.46211715726000974), "0.4621171573");
        assert_eq!(ten(33022.184072811644), "33022.18407");
    }

    #[test]
    fn exponent_form_outside_range() {
        assert_eq!(ten(3.3554432e-18), "3.3554432e-18");
        assert_eq!(ten(1e16), "1e16");
        assert_eq!(ten(1e-7), "1e-7");
        assert_eq!(ten(-2.5e20), "-2.5e20");
        assert_eq!(
            format_number(9.999999999999999e-11, Precision::Full),
            "9.999999999999999e-11"
        );
    }

    #[test]
    fn rounded_large_numbers_never_show_made_up_zeros() {
        assert_eq!(ten(1099511627776.5), "1.099511628e12");
        assert_eq!(ten(123456789012.25), "1.23456789e11");
        assert_eq!(format_number(123456.5, Precision::Digits(3)), "1.23e5");
        assert_eq!(format_number(123000.0, Precision::Digits(3)), "123000");
        assert_eq!(
            format_number(1099511627776.0, Precision::Full),
            "1099511627776"
        );
        assert_eq!(ten(4294967296.0), "4294967296");
    }

    #[test]
    fn integers_up_to_two_to_the_53_are_shown_whole() {
        // 2^40, a 12-digit integer, 10^15, 2^53 and -(2^53 - 1): all exact in f64.
        assert_eq!(ten(1099511627776.0), "1099511627776");
        assert_eq!(ten(123456789012.0), "123456789012");
        assert_eq!(ten(1e15), "1000000000000000");
        assert_eq!(ten(9007199254740992.0), "9007199254740992");
        assert_eq!(ten(-9007199254740991.0), "-9007199254740991");
        assert_eq!(format_number(123456.0, Precision::Digits(3)), "123456");
        // Past 2^53 not every integer is exact: exponent form as before.
        assert_eq!(ten(18014398509481984.0), "1.801439851e16");
    }

    #[test]
    fn specials_and_negative_zero() {
        assert_eq!(ten(-0.0), "0");
        assert_eq!(ten(f64::INFINITY), "inf");
        assert_eq!(ten(f64::NEG_INFINITY), "-inf");
        assert_eq!(ten(f64::NAN), "nan");
    }

    #[test]
    fn rounding_carries_into_the_exponent() {
        assert_eq!(ten(9.9999999999), "10");
        assert_eq!(ten(999999999999999.9), "1e15");
        assert_eq!(format_number(2.0 / 3.0, Precision::Digits(3)), "0.667");
        assert_eq!(
            format_number(0.1 + 0.2, Precision::Full),
            "0.30000000000000004"
        );
    }
}
