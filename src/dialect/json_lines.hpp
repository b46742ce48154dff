#pragma once
// Shared by the structured readers: one output line as a JSON object, typed field access,
// the bounded keepers for the final message and the last error, and the reader they all are.

#include <board/agent_dialect.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace board::dialect_detail {

/// `s` without spaces, tabs and carriage returns at either end.
std::string_view trim(std::string_view s);

/// `line` as a JSON object with a string `type`, if it is one.
std::optional<boost::json::object> parse_event(std::string_view line);

std::string_view string_at(const boost::json::object& o, std::string_view key);
const boost::json::object* object_at(const boost::json::object& o, std::string_view key);
std::int64_t count_at(const boost::json::object& o, std::string_view key);

/// The agent's final message: replaced by each newer message, its tail kept when it is
/// longer than the cap (the signal is at the end).
class FinalMessage {
public:
    static constexpr std::size_t max_bytes = 1u << 20;

    void start() {
        text_.clear();
        cut_ = false;
    }

    void append(std::string_view text);

    void replace(std::string_view text) {
        start();
        append(text);
    }

    bool empty() const { return text_.empty(); }

    /// Moves the text into `report`, with a warning if it was cut.
    void into(AgentReport& report);

private:
    std::string text_;
    bool cut_ = false;
};

/// An error text as a report keeps it: one line (line breaks become spaces), trimmed, at
/// most 1000 bytes on a UTF-8 boundary.
std::string one_line(std::string_view text);

/// The line printed outside the JSON stream that best says what went wrong (a usage error, a
/// stack trace's message): the last line that starts with `error`, else the last line. A usage
/// message ends with help text (`For more information, try '--help'.`), not with the error.
class PlainLines {
public:
    void note(std::string_view line);

    const std::string& last() const { return last_error_.empty() ? last_ : last_error_; }

private:
    std::string last_;
    std::string last_error_;
};

/// The shared end of a structured reader: the error text and whether retrying helps, from
/// the error the output named or else the last plain line, given the exit code.
void settle_error(AgentReport& report,
                  std::string named_error,
                  const PlainLines& plain,
                  int exit_code);

/// What every structured reader is: each output line that is a JSON event goes to event();
/// any other line is kept as a plain line (an error printed outside the stream) and shown as
/// progress. finish() moves the final message into the report and settles its error: none
/// for a run that succeeded; for one that failed (by its exit code or by what it printed), the
/// error the output named, else the last plain line.
class JsonLinesReader : public OutputReader {
public:
    void line(std::string_view text) final;
    AgentReport finish(int exit_code) override;

protected:
    /// One event of the stream, and its `type`.
    virtual void event(const boost::json::object& event, std::string_view type) = 0;

    AgentReport report_;
    FinalMessage final_;
    /// The last error the output named; it counts only if the run failed.
    std::string named_error_;

private:
    PlainLines plain_;
};

}  // namespace board::dialect_detail
