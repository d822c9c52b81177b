//! The RFC 3339 timestamps the contract, the transport envelope, the A2A service and the line
//! read and write, and their calendar arithmetic (proleptic Gregorian, Howard Hinnant's
//! `days_from_civil` / `civil_from_days`): one copy for all of them.
//!
//! One reader, [`parse_offset_time`], takes every RFC 3339 `date-time` with its offset; the
//! contract's and the envelope's canonical form is the narrower [`parse_canonical_ms`], the
//! exact inverse of the one writer, [`format_ms`].

/// The most digits of a fraction of a second a time may carry: 9, nanoseconds. RFC 3339's
/// grammar sets no bound, but no writer goes past nanoseconds (JavaScript writes 3, protobuf's
/// JSON `Timestamp` 3, 6 or 9, Go's `RFC3339Nano` up to 9), and the bound keeps a time short.
/// Digits past the third are read and dropped: a time is kept to the millisecond.
pub const MAX_FRACTION_DIGITS: usize = 9;

/// Days from 1970-01-01 to the proleptic Gregorian date `year-month-day` (month 1 to 12; the
/// day is not checked against the month).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The days of `month` (1 to 12) in `year` of the proleptic Gregorian calendar; `None` for a
/// month that is not one.
pub fn days_in_month(year: i64, month: i64) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    })
}

/// The date `(year, month, day)` that is `days` after 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (RFC 3339 UTC with milliseconds). Years
/// 0000 to 9999: an instant outside them is clamped to their ends.
pub fn format_ms(ms: i64) -> String {
    const MIN: i64 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
    const MAX: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    let ms = ms.clamp(MIN, MAX);
    let (year, month, day) = civil_from_days(ms.div_euclid(86_400_000));
    let rest = ms.rem_euclid(86_400_000);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// Milliseconds since the epoch of an RFC 3339 `date-time` (section 5.6) that carries its
/// offset: `YYYY-MM-DD`, `T` or `t`, `HH:MM:SS`, an optional fraction, then `Z`, `z` or
/// `+HH:MM` / `-HH:MM`.
///
/// - The date is a real day of the proleptic Gregorian calendar (years 0000 to 9999).
/// - Hours are 00 to 23, minutes and seconds 00 to 59. A leap second (`:60`) is refused, as
///   JavaScript's `Date.parse` and Python's `datetime` refuse it.
/// - The fraction has 1 to [`MAX_FRACTION_DIGITS`] digits, truncated to milliseconds.
/// - The offset's hours are 00 to 23, its minutes 00 to 59.
///
/// A time without its offset, a space for the `T`, any other character: `None`.
pub fn parse_offset_time(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || !text.is_ascii() {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        (from..from + len).try_fold(0i64, |acc, i| {
            b.get(i)
                .filter(|c| c.is_ascii_digit())
                .map(|c| acc * 10 + i64::from(c - b'0'))
        })
    };
    let punctuation = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if punctuation.iter().any(|&(i, c)| b[i] != c) || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut at = 19;
    let mut milli = 0;
    if b[at] == b'.' {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if !(1..=MAX_FRACTION_DIGITS).contains(&digits) {
            return None;
        }
        let kept = digits.min(3);
        milli = num(at + 1, kept)? * 10i64.pow(3 - kept as u32);
        at += 1 + digits;
    }
    let offset_minutes = match &b[at..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            if *sign == b'-' {
                -(h * 60 + m)
            } else {
                h * 60 + m
            }
        }
        _ => return None,
    };
    if day < 1 || day > days_in_month(year, month)? || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let local = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60_000;
    Some(local + second * 1000 + milli - offset_minutes * 60_000)
}

/// Milliseconds since the epoch of a time written exactly as [`format_ms`] writes it
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`: three fraction digits, `T` and `Z` in capitals, no offset,
/// years 0000 to 9999), else `None`. This is JavaScript's canonical form: what
/// `new Date(Date.parse(s)).toISOString() === s` accepts.
pub fn parse_canonical_ms(text: &str) -> Option<i64> {
    parse_offset_time(text).filter(|&ms| format_ms(ms) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_known_instants_format() {
        for days in [-719_468, -1, 0, 1, 11_016, 19_723, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_ms(i64::MIN), "0000-01-01T00:00:00.000Z");
    }

    #[test]
    fn offset_times_parse_to_the_millisecond() {
        let z = parse_offset_time("2026-01-01T00:00:00Z").unwrap();
        assert_eq!(z, 1_767_225_600_000);
        assert_eq!(parse_offset_time("2026-01-01t00:00:00z"), Some(z));
        assert_eq!(parse_offset_time("2026-01-01T01:30:00+01:30"), Some(z));
        assert_eq!(parse_offset_time("2025-12-31T23:00:00-01:00"), Some(z));
        assert_eq!(parse_offset_time("2026-01-01T00:00:00-00:00"), Some(z));
        assert_eq!(
            parse_offset_time("2024-02-29T00:00:00Z"),
            Some(1_709_164_800_000)
        );
        assert_eq!(parse_offset_time("1969-12-31T23:59:59.999Z"), Some(-1));
        assert_eq!(
            parse_offset_time("0000-01-01T00:00:00Z"),
            Some(-62_167_219_200_000)
        );
        for bad in [
            "",
            "2026-01-01",
            "2026-01-01T00:00:00",
            "2026-01-01 00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-12-31T23:59:60Z",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+01:60",
            "2026-01-01T00:00:00+01",
            "2026-01-01T00:00:00ZZ",
            "+2026-01-01T00:00:00Z",
            "２０２６-01-01T00:00:00Z",
            "2026-01-01T00:00:00Zé",
        ] {
            assert_eq!(parse_offset_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_fraction_has_one_to_nine_digits_kept_to_the_millisecond() {
        let z = parse_offset_time("2026-01-01T00:00:00Z").unwrap();
        for (fraction, ms) in [
            ("5", 500),
            ("05", 50),
            ("123", 123),
            ("1239", 123),
            ("123456", 123),
            ("999999999", 999),
        ] {
            let text = format!("2026-01-01T00:00:00.{fraction}Z");
            assert_eq!(parse_offset_time(&text), Some(z + ms), "{text}");
        }
        assert_eq!(MAX_FRACTION_DIGITS, 9);
        for bad in [
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T00:00:00.5.5Z",
            "2026-01-01T00:00:00,5Z",
        ] {
            assert_eq!(parse_offset_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_canonical_form_is_exactly_what_format_ms_writes() {
        for ms in [
            0,
            -1,
            951_782_400_123,
            1_700_000_000_000,
            253_402_300_799_999,
        ] {
            assert_eq!(parse_canonical_ms(&format_ms(ms)), Some(ms));
        }
        assert_eq!(
            parse_canonical_ms("0000-01-01T00:00:00.000Z"),
            Some(-62_167_219_200_000)
        );
        for bad in [
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00.0Z",
            "2026-01-01T00:00:00.0000Z",
            "2026-01-01T00:00:00.000z",
            "2026-01-01t00:00:00.000Z",
            "2026-01-01T00:00:00.000+00:00",
            "2026-02-29T00:00:00.000Z",
        ] {
            assert_eq!(parse_canonical_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_in_month_knows_leap_years() {
        assert_eq!(days_in_month(2024, 2), Some(29));
        assert_eq!(days_in_month(1900, 2), Some(28));
        assert_eq!(days_in_month(2000, 2), Some(29));
        assert_eq!(days_in_month(2026, 4), Some(30));
        assert_eq!(days_in_month(2026, 12), Some(31));
        assert_eq!(days_in_month(2026, 0), None);
        assert_eq!(days_in_month(2026, 13), None);
    }
}
