// UTC timestamps with no locale, no time zone database and no libc time calls, so the result
// is the same on every machine: the calendar is <chrono>'s (sys_days, year_month_day,
// hh_mm_ss); the digits are read and written by hand (GCC 12 has no std::chrono::parse or
// std::format).

#include "json_writer.hpp"

#include <board/codec.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace board {
namespace {

namespace chrono = std::chrono;

using Millis = chrono::sys_time<chrono::milliseconds>;

constexpr UnixMillis millis_since_epoch(chrono::sys_days day) {
    return Millis{day}.time_since_epoch().count();
}

static_assert(millis_since_epoch(chrono::year{0} / chrono::January / 1) == min_timestamp);
static_assert(millis_since_epoch(chrono::year{10000} / chrono::January / 1) - 1 == max_timestamp);

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
    const Millis time{chrono::milliseconds{std::clamp(at, min_timestamp, max_timestamp)}};
    // floor: -1 ms is the last millisecond of 1969-12-31, not of 1970-01-01.
    const auto day = chrono::floor<chrono::days>(time);
    const chrono::year_month_day date{day};
    const chrono::hh_mm_ss clock{time - day};

    constexpr std::string_view layout = "0000-00-00T00:00:00.000Z";
    static_assert(layout.size() == timestamp_size);
    std::copy(layout.begin(), layout.end(), out);
    put_digits(out + 4, 4, int{date.year()});
    put_digits(out + 7, 2, unsigned{date.month()});
    put_digits(out + 10, 2, unsigned{date.day()});
    put_digits(out + 13, 2, clock.hours().count());
    put_digits(out + 16, 2, clock.minutes().count());
    put_digits(out + 19, 2, clock.seconds().count());
    put_digits(out + 23, 3, clock.subseconds().count());
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
    if (year < 0 || month < 0 || day < 0) return std::nullopt;
    // ok(): a month of 1..12 and a day that month has (29 February only in a leap year).
    const chrono::year_month_day date{chrono::year{year},
                                      chrono::month{static_cast<unsigned>(month)},
                                      chrono::day{static_cast<unsigned>(day)}};
    if (!date.ok() || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > 59)
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

    return millis_since_epoch(chrono::sys_days{date}) +
           ((hour * 60 + minute) * 60 + second) * std::int64_t{1000} + millis;
}

}  // namespace board
