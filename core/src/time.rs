//! Calendar arithmetic of the UTC timestamps the contract reads and writes (proleptic Gregorian,
//! Howard Hinnant's `days_from_civil` / `civil_from_days`): one copy for the contract readers,
//! the transport envelope and the A2A service.

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
}
