#pragma once
// A minimal JSON writer appending straight to a std::string. The codec writes its own text
// rather than building a boost::json::value: it is several times faster, keeps keys in the
// documented order, prints doubles in their shortest round-trip form (Boost.JSON prints
// `1.5E0`) and replaces invalid UTF-8 so every line it writes can be parsed back.

#include <board/ticket.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace board::codec_detail {

/// Writes after the current end of `out`. The string doubles as a raw buffer while writing
/// (one capacity check per value, not one per character) and is cut to what was written when
/// the writer is destroyed: use `out` only after that.
class JsonWriter {
public:
    explicit JsonWriter(std::string& out)
        : out_(out)
        , start_(out.size())
        , size_(out.size()) {}

    ~JsonWriter() { out_.resize(size_); }

    JsonWriter(const JsonWriter&) = delete;
    JsonWriter& operator=(const JsonWriter&) = delete;
    JsonWriter(JsonWriter&&) = delete;
    JsonWriter& operator=(JsonWriter&&) = delete;

    void begin_object() { punctuation('{', false); }

    void end_object() { punctuation('}', true); }

    void begin_array() { punctuation('[', false); }

    void end_array() { punctuation(']', true); }

    /// Precondition: `name` needs no escaping (the codec's keys are ASCII identifiers).
    void key(std::string_view name);

    void string(std::string_view text);
    void integer(std::int64_t number);
    void number(double number);
    void boolean(bool value);
    void timestamp(UnixMillis at);

    void field(std::string_view name, std::string_view text) {
        key(name);
        string(text);
    }

private:
    /// Room for `n` more bytes at the end of what is written; write there, then commit().
    char* room(std::size_t n);

    void commit(const char* end) { size_ = static_cast<std::size_t>(end - out_.data()); }

    /// A comma first if a value precedes this one at the same level.
    char* separated(std::size_t n);

    void punctuation(char c, bool value_done);

    std::string& out_;
    std::size_t start_;  ///< out_'s size before this writer
    std::size_t size_;   ///< out_'s size with what was written; out_ may be longer (scratch)
    bool need_comma_ = false;
};

/// Appends `text` as a JSON string literal: quoted, escaped, each byte not part of a
/// well-formed UTF-8 character (support/utf8.hpp: the set Boost.JSON accepts) as U+FFFD.
void append_json_string(std::string& out, std::string_view text);

/// The length of a timestamp as format_timestamp() writes it: `2026-11-21T10:04:05.123Z`.
inline constexpr std::size_t timestamp_size = 24;

/// Writes the timestamp at `out` (timestamp_size bytes) and returns the end.
char* write_timestamp(char* out, UnixMillis at);

}  // namespace board::codec_detail
