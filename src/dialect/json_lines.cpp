#include "dialect/json_lines.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstdint>

namespace board::dialect_detail {

namespace json = boost::json;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

namespace {

/// How many bytes of `text`, at most `limit`, end on a UTF-8 boundary.
std::size_t utf8_prefix(std::string_view text, std::size_t limit) {
    if (text.size() <= limit) return text.size();
    std::size_t n = limit;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U) --n;
    return n;
}

}  // namespace

namespace {

/// The 16-bit value of `\uXXXX` at `at` (the backslash), or -1 when it is no such escape.
long utf16_escape_at(std::string_view text, std::size_t at) {
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
    long value = 0;
    for (std::size_t i = at + 2; i < at + 6; ++i) {
        const char c = text[i];
        const int digit = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/// `text` with each UTF-16 surrogate escape that has no partner made U+FFFD. Node writes one
/// when it cuts a string inside an emoji; Boost.JSON refuses the line, and with it the
/// result event that carries the signal, the cost and the session.
std::string without_lone_surrogates(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        if (text[at] != '\\' || at + 1 >= text.size()) {
            out += text[at++];
            continue;
        }
        const long unit = utf16_escape_at(text, at);
        if (unit < 0) {
            out.append(text.substr(at, 2));  // another escape, `\\` included: kept whole
            at += 2;
            continue;
        }
        const bool high = unit >= 0xD800 && unit <= 0xDBFF;
        const bool low = unit >= 0xDC00 && unit <= 0xDFFF;
        const long next = high ? utf16_escape_at(text, at + 6) : -1;
        if (high && next >= 0xDC00 && next <= 0xDFFF) {
            out.append(text.substr(at, 12));  // a pair: one character
            at += 12;
        } else {
            out.append(high || low ? std::string_view{"\\ufffd"} : text.substr(at, 6));
            at += 6;
        }
    }
    return out;
}

}  // namespace

std::optional<json::object> parse_event(std::string_view line) {
    const auto body = trim(line);
    if (body.size() < 2 || body.front() != '{' || body.back() != '}') return std::nullopt;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec && body.find("\\u") != std::string_view::npos) {
        ec.clear();
        v = json::parse(without_lone_surrogates(body), ec);
    }
    if (ec || !v.is_object()) return std::nullopt;
    auto& o = v.get_object();
    if (string_at(o, "type").empty()) return std::nullopt;
    return std::move(o);
}

std::string_view string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v || !v->is_string()) return {};
    return v->get_string();
}

const json::object* object_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_object() ? &v->get_object() : nullptr;
}

std::int64_t count_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    if (v->is_int64()) return std::max<std::int64_t>(0, v->get_int64());
    if (v->is_uint64())
        return static_cast<std::int64_t>(std::min<std::uint64_t>(v->get_uint64(), INT64_MAX));
    if (v->is_double() && v->get_double() > 0 && v->get_double() < 9e18)
        return static_cast<std::int64_t>(v->get_double());
    return 0;
}

void FinalMessage::append(std::string_view text) {
    text_.append(text);
    // Trimmed only at twice the cap, so many small appends past it stay linear.
    if (text_.size() > 2 * max_bytes) {
        std::size_t cut = text_.size() - max_bytes;
        while (cut < text_.size() && (static_cast<unsigned char>(text_[cut]) & 0xC0U) == 0x80U)
            ++cut;
        text_.erase(0, cut);
        cut_ = true;
    }
}

void FinalMessage::into(AgentReport& report) {
    if (text_.size() > max_bytes) {
        std::size_t cut = text_.size() - max_bytes;
        while (cut < text_.size() && (static_cast<unsigned char>(text_[cut]) & 0xC0U) == 0x80U)
            ++cut;
        text_.erase(0, cut);
        cut_ = true;
    }
    if (cut_) {
        report.warnings.push_back("the agent's final message was longer than " +
                                  std::to_string(max_bytes >> 20) + " MB; only its end was read");
    }
    report.message = std::move(text_);
    start();
}

std::string one_line(std::string_view text) {
    std::string out;
    for (const char c : trim(text)) out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    out.resize(utf8_prefix(out, 1000));
    return out;
}

void PlainLines::note(std::string_view line) {
    // Called for every line of an agent that may print millions: the kept strings are
    // reused, never made anew.
    const auto shown = trim(line);
    if (shown.empty()) return;
    last_.assign(shown.substr(0, utf8_prefix(shown, 1000)));
    for (char& c : last_)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    const auto head = shown.substr(0, 5);
    if (head == "error" || head == "Error" || head == "ERROR") last_error_.assign(last_);
}

void settle_error(AgentReport& report,
                  std::string named_error,
                  const PlainLines& plain,
                  int exit_code) {
    const bool failed = exit_code != 0 || report.failed_in_output;
    if (!named_error.empty()) {
        report.error = one_line(named_error);
    } else if (failed && !plain.last().empty()) {
        report.error = plain.last();
    }
    report.retry = failed ? classify_error(report.error) : Retry::helps;
}

void JsonLinesReader::line(std::string_view text) {
    const auto parsed = parse_event(text);
    if (!parsed) {
        plain_.note(text);
        show_progress(text);
        return;
    }
    event(*parsed, string_at(*parsed, "type"));
}

AgentReport JsonLinesReader::finish(int exit_code) {
    final_.into(report_);
    const bool failed = exit_code != 0 || report_.failed_in_output;
    settle_error(report_, failed ? std::move(named_error_) : std::string{}, plain_, exit_code);
    return std::move(report_);
}

}  // namespace board::dialect_detail
