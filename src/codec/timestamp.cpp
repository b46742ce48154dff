// UTC timestamps by pure arithmetic: no locale, no time zone database, no libc time calls, so
// the result is the same on every machine. The calendar algorithms are Howard Hinnant's
// days_from_civil / civil_from_days (http://howardhinnant.github.io/date_algorithms.html).

#include "json_writer.hpp"

#include <board/codec.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

namespace board {
namespace {

constexpr std::int64_t ms_per_day = 86'400'000;

struct CivilDate {
    std::int64_t year;
    int month;  // 1..12
    int day;    // 1..31
};

/// Days since 1970-01-01 of a proleptic Gregorian date.
constexpr std::int64_t days_from_civil(std::int64_t y, int m, int d) {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;                                    // [0, 399]
    const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
    return era * 146097 + doe - 719468;
}

constexpr CivilDate civil_from_days(std::int64_t z) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;                                       // [0, 146096]
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
    const std::int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
    const auto day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const auto month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    return {yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(civil_from_days(-1).year == 1969 && civil_from_days(-1).day == 31);
static_assert(days_from_civil(0, 1, 1) * ms_per_day == min_timestamp);
static_assert(days_from_civil(10000, 1, 1) * ms_per_day - 1 == max_timestamp);

constexpr bool is_leap(std::int64_t y) {
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

constexpr int days_in_month(std::int64_t y, int m) {
    constexpr std::array<int, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[static_cast<std::size_t>(m - 1)];
}

/// Floor division: -1 ms is the last millisecond of 1969-12-31, not of 1970-01-01.
constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0);
}

/// Writes `value` as exactly `width` decimal digits ending just before `end`.
void put_digits(char* end, int width, std::int64_t value) {
    for (int i = 0; i < width; ++i) {
        *--end = static_cast<char>('0' + value % 10);
        value /= 10;
    }
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/// Reads `width` digits at `text[pos]`, or -1 if any of them is not a digit.
int read_digits(std::string_view text, std::size_t pos, std::size_t width) {
    int value = 0;
    for (std::size_t i = pos; i < pos + width; ++i) {
        if (!is_digit(text[i])) return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

}  // namespace

namespace codec_detail {

char* write_timestamp(char* out, UnixMillis at) {
    at = std::clamp(at, min_timestamp, max_timestamp);
    const std::int64_t days = floor_div(at, ms_per_day);
    const std::int64_t ms_of_day = at - days * ms_per_day;
    const CivilDate date = civil_from_days(days);

    constexpr std::string_view layout = "0000-00-00T00:00:00.000Z";
    static_assert(layout.size() == timestamp_size);
    std::copy(layout.begin(), layout.end(), out);
    put_digits(out + 4, 4, date.year);
    put_digits(out + 7, 2, date.month);
    put_digits(out + 10, 2, date.day);
    put_digits(out + 13, 2, ms_of_day / 3'600'000);
    put_digits(out + 16, 2, ms_of_day / 60'000 % 60);
    put_digits(out + 19, 2, ms_of_day / 1000 % 60);
    put_digits(out + 23, 3, ms_of_day % 1000);
    return out + timestamp_size;
}

}  // namespace codec_detail

std::string format_timestamp(UnixMillis at) {
    std::string out(codec_detail::timestamp_size, '\0');
    codec_detail::write_timestamp(out.data(), at);
    return out;
}

std::optional<UnixMillis> parse_timestamp(std::string_view text) {
    // Fixed layout up to the seconds: YYYY-MM-DDTHH:MM:SS, then [.f{1,9}] and Z.
    constexpr std::size_t seconds_end = 19;
    if (text.size() < seconds_end + 1 || text.back() != 'Z') return std::nullopt;
    if (text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':')
        return std::nullopt;
    const int year = read_digits(text, 0, 4);
    const int month = read_digits(text, 5, 2);
    const int day = read_digits(text, 8, 2);
    const int hour = read_digits(text, 11, 2);
    const int minute = read_digits(text, 14, 2);
    const int second = read_digits(text, 17, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
        return std::nullopt;

    int millis = 0;
    const std::string_view fraction = text.substr(seconds_end, text.size() - seconds_end - 1);
    if (!fraction.empty()) {
        const std::size_t digits = fraction.size() - 1;
        if (fraction[0] != '.' || digits < 1 || digits > 9) return std::nullopt;
        if (read_digits(fraction, 1, digits) < 0) return std::nullopt;
        // Truncate to milliseconds: the digits past the third are checked, then dropped.
        for (std::size_t i = 1; i <= 3; ++i)
            millis = millis * 10 + (i <= digits ? fraction[i] - '0' : 0);
    }

    const std::int64_t days = days_from_civil(year, month, day);
    return days * ms_per_day + ((hour * 60 + minute) * 60 + second) * std::int64_t{1000} + millis;
}

}  // namespace board
