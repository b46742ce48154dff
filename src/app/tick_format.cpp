// tk's tick files read: `.tick/issues/<id>.json` objects and the `notes` text, each failure
// named by file and line or field (tick_format.hpp). The import itself is import_ticks.cpp.

#include "app/tick_format.hpp"

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/reduce.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
namespace json = boost::json;

namespace board::app {
namespace {

// ---------------------------------------------------------------------------------------------
// Parsing

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int to_int(std::string_view s) {
    int v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2 ? 1 : 0;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const int yoe = y - era * 400;
    const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

/// `YYYY-MM-DD HH:MM - ` at the start of `line`: the stamp as if UTC, else nullopt.
std::optional<UnixMillis> note_stamp(std::string_view line) {
    if (line.size() < 19 || line.substr(16, 3) != " - ") return std::nullopt;
    if (line[4] != '-' || line[7] != '-' || line[10] != ' ' || line[13] != ':') return std::nullopt;
    const auto y = line.substr(0, 4), mo = line.substr(5, 2), d = line.substr(8, 2),
               h = line.substr(11, 2), mi = line.substr(14, 2);
    if (!all_digits(y) || !all_digits(mo) || !all_digits(d) || !all_digits(h) || !all_digits(mi))
        return std::nullopt;
    const int month = to_int(mo), day = to_int(d), hour = to_int(h), minute = to_int(mi);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59)
        return std::nullopt;
    const std::int64_t days = days_from_civil(to_int(y), month, day);
    return ((days * 24 + hour) * 60 + minute) * 60'000;
}

/// The JSON text of a value, for the report.
std::string text_of(const json::value& v) {
    return json::serialize(v);
}

/// 1-based line and column of byte `offset` in `text`.
std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    const auto before = text.substr(0, offset);
    const auto line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
    const auto last_nl = before.rfind('\n');
    const std::size_t col = last_nl == std::string_view::npos ? offset + 1 : offset - last_nl;
    return {line, col};
}

/// Reads the fields of one tick object; the first bad field becomes `error`.
class FieldReader {
public:
    FieldReader(const json::object& object, std::string_view file)
        : object_(object)
        , file_(file) {}

    const std::optional<std::string>& error() const { return error_; }

    /// nullptr when absent or null.
    const json::value* find(std::string_view key) const {
        const auto* v = object_.if_contains(key);
        return v && !v->is_null() ? v : nullptr;
    }

    void fail(std::string_view field, std::string message) {
        if (!error_) error_ = fmt::format("{}: field \"{}\": {}", file_, field, message);
    }

    std::string string(std::string_view key, bool required = false) {
        const auto* v = find(key);
        if (!v) {
            if (required) fail(key, "missing (tk requires it)");
            return {};
        }
        if (!v->is_string()) {
            fail(key, fmt::format("expected a string, found {}", text_of(*v)));
            return {};
        }
        return std::string{v->get_string()};
    }

    std::vector<std::string> strings(std::string_view key) {
        std::vector<std::string> out;
        const auto* v = find(key);
        if (!v) return out;
        if (!v->is_array()) {
            fail(key, fmt::format("expected an array of strings, found {}", text_of(*v)));
            return out;
        }
        for (const auto& item : v->get_array()) {
            if (!item.is_string()) {
                fail(key, fmt::format("expected an array of strings, found {}", text_of(item)));
                return out;
            }
            out.emplace_back(item.get_string());
        }
        return out;
    }

    std::optional<UnixMillis> time(std::string_view key, bool required = false) {
        const std::string text = string(key, required);
        if (text.empty()) return std::nullopt;
        auto at = parse_rfc3339(text);
        if (!at) fail(key, fmt::format("\"{}\" is not an RFC 3339 time", text));
        return at;
    }

    /// One of `allowed` (tk's enum), or empty when absent.
    std::string one_of(std::string_view key,
                       std::initializer_list<std::string_view> allowed,
                       bool required = false) {
        std::string value = string(key, required);
        if (value.empty() || error_) return value;
        if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
            std::string list;
            for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string{a};
            fail(key, fmt::format("\"{}\" is not one of {}", value, list));
        }
        return value;
    }

private:
    const json::object& object_;
    std::string_view file_;
    std::optional<std::string> error_;
};

/// tk's fields the board has no place for: reported with their value when set.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> unkept_fields{{
    {"after", "the board has no soft order, only blocked_by"},
    {"target_date", "the board has no target dates"},
    {"defer_until", "the board has no deferral"},
    {"external_ref", "the board has no external reference field"},
    {"discovered_from", "the board has no discovered-from link"},
    {"role", "the board has no process roles (review/closeout ticks)"},
    {"base_branch", "the board has no per-epic base branch"},
    {"trace_id", "the board has no trace ids"},
}};

/// tk's fields the import reads.
constexpr std::array<std::string_view, 19> read_fields{"id",
                                                       "title",
                                                       "description",
                                                       "acceptance_criteria",
                                                       "notes",
                                                       "status",
                                                       "priority",
                                                       "type",
                                                       "labels",
                                                       "blocked_by",
                                                       "parent",
                                                       "manual",
                                                       "requires",
                                                       "awaiting",
                                                       "verdict",
                                                       "created_at",
                                                       "started_at",
                                                       "closed_at",
                                                       "closed_reason"};

bool is_set(const json::value& v) {
    if (v.is_null()) return false;
    if (v.is_string()) return !v.get_string().empty();
    if (v.is_array()) return !v.get_array().empty();
    if (v.is_object()) return !v.get_object().empty();
    if (v.is_bool()) return v.get_bool();
    return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::optional<UnixMillis> parse_rfc3339(std::string_view text) {
    if (text.size() < 20 || text[10] != 'T') return std::nullopt;
    std::int64_t offset_minutes = 0;
    std::string base;
    if (text.back() == 'Z' || text.back() == 'z') {
        base = std::string{text.substr(0, text.size() - 1)} + "Z";
    } else {
        const auto zone = text.substr(text.size() - 6);
        if ((zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
            !all_digits(zone.substr(1, 2)) || !all_digits(zone.substr(4, 2)))
            return std::nullopt;
        offset_minutes = to_int(zone.substr(1, 2)) * 60 + to_int(zone.substr(4, 2));
        if (zone[0] == '-') offset_minutes = -offset_minutes;
        base = std::string{text.substr(0, text.size() - 6)} + "Z";
    }
    // Go writes up to 9 fraction digits; the codec reads them and keeps milliseconds.
    auto utc = parse_timestamp(base);
    if (!utc) return std::nullopt;
    return *utc - offset_minutes * 60'000;
}

std::vector<TickNote> parse_tick_notes(std::string_view notes) {
    std::vector<TickNote> out;
    std::size_t start = 0;
    while (start < notes.size()) {
        auto end = notes.find('\n', start);
        if (end == std::string_view::npos) end = notes.size();
        std::string_view line = notes.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        start = end + 1;
        if (auto wall = note_stamp(line)) {
            TickNote note;
            note.wall = wall;
            std::string_view text = line.substr(19);
            constexpr std::string_view human_prefix = "[human] ";
            if (text.substr(0, human_prefix.size()) == human_prefix) {
                note.human = true;
                text.remove_prefix(human_prefix.size());
            }
            note.text = std::string{text};
            out.push_back(std::move(note));
        } else if (!out.empty()) {
            out.back().text += "\n";
            out.back().text += line;
        } else if (!line.empty()) {
            out.push_back(TickNote{false, std::string{line}, std::nullopt});
        }
    }
    // Trailing blank continuation lines carry nothing.
    for (auto& note : out) {
        while (!note.text.empty() && (note.text.back() == '\n' || note.text.back() == ' '))
            note.text.pop_back();
    }
    std::erase_if(out, [](const TickNote& n) { return n.text.empty(); });
    return out;
}

namespace {

/// Where JSON syntax first fails: the smallest prefix that already fails to parse ends with
/// the offending character (the parser's own count stops at the start of the member it was
/// in). Text that only fails at its end (cut short) points past its last character.
std::size_t syntax_error_offset(std::string_view text) {
    auto fails = [&](std::size_t length) {
        json::stream_parser p;
        boost::system::error_code ec;
        p.write_some(text.data(), length, ec);
        return static_cast<bool>(ec);
    };
    std::size_t lo = 0, hi = text.size();
    if (!fails(hi)) return text.size();
    while (lo + 1 < hi) {  // fails(hi) holds; fails(lo) does not (an empty prefix never fails)
        const std::size_t mid = lo + (hi - lo) / 2;
        if (fails(mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi - 1;
}

}  // namespace

std::variant<Tick, std::string> parse_tick(std::string_view text, std::string_view file) {
    json::stream_parser parser;
    boost::system::error_code ec;
    parser.write_some(text.data(), text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec) {
        const auto [line, col] = line_col(text, syntax_error_offset(text));
        return fmt::format("{}:{}:{}: not valid JSON: {}", file, line, col, ec.message());
    }
    const json::value doc = parser.release();
    if (!doc.is_object()) return fmt::format("{}: expected a JSON object (one tick)", file);
    const json::object& object = doc.get_object();

    FieldReader r{object, file};
    Tick t;
    t.id = r.string("id", true);
    t.title = r.string("title", true);
    if (!r.error() && t.title.find_first_not_of(" \t\r\n") == std::string::npos)
        r.fail("title", "is empty");
    t.description = r.string("description");
    t.acceptance_criteria = r.string("acceptance_criteria");
    t.notes = parse_tick_notes(r.string("notes"));
    t.status = r.one_of("status", {"open", "in_progress", "closed"}, true);
    if (const auto* p = r.find("priority")) {
        if (!p->is_int64() || p->get_int64() < 0 || p->get_int64() > 4)
            r.fail("priority", fmt::format("{} is not an integer from 0 to 4", text_of(*p)));
        else
            t.priority = static_cast<int>(p->get_int64());
    } else {
        r.fail("priority", "missing (tk requires it)");
    }
    const auto type = r.one_of("type", {"task", "bug", "feature", "chore", "epic"}, true);
    if (auto parsed = parse<TicketType>(type)) t.type = *parsed;
    t.labels = r.strings("labels");
    t.blocked_by = r.strings("blocked_by");
    t.parent = r.string("parent");
    if (const auto* m = r.find("manual")) {
        if (!m->is_bool())
            r.fail("manual", fmt::format("expected true or false, found {}", text_of(*m)));
        else
            t.manual = m->get_bool();
    }
    if (auto req = r.one_of("requires", {"approval", "review", "content"}); !req.empty())
        t.requires_ = parse<Awaiting>(req);
    if (auto aw = r.one_of(
            "awaiting",
            {"work", "approval", "input", "review", "content", "escalation", "checkpoint"});
        !aw.empty())
        t.awaiting = parse<Awaiting>(aw);
    t.verdict = r.one_of("verdict", {"approved", "rejected"});
    if (auto at = r.time("created_at", true)) t.created_at = *at;
    t.started_at = r.time("started_at");
    t.closed_at = r.time("closed_at");
    t.closed_reason = r.string("closed_reason");
    if (r.error()) return *r.error();

    for (const auto& [name, value] : object) {
        // A lambda below takes the key: clang 14 cannot capture a structured binding.
        const std::string_view key = name;
        const bool read =
            std::find(read_fields.begin(), read_fields.end(), key) != read_fields.end();
        const bool not_kept =
            std::find(tick_fields_not_kept.begin(), tick_fields_not_kept.end(), key) !=
            tick_fields_not_kept.end();
        if (read || not_kept) continue;
        const auto known = std::find_if(unkept_fields.begin(),
                                        unkept_fields.end(),
                                        [&](const auto& f) { return f.first == key; });
        if (known != unkept_fields.end()) {
            if (is_set(value))
                t.unmapped.push_back(
                    {t.id, std::string{key}, text_of(value), std::string{known->second}});
        } else {
            t.unmapped.push_back({t.id,
                                  std::string{key},
                                  text_of(value),
                                  "not a field of tk's tick schema; kept nowhere"});
        }
    }
    return t;
}

}  // namespace board::app
