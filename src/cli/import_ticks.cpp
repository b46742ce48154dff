// `board import-ticks PATH`: tk's `.tick/issues/*.json` to tickets. Three steps, so that a bad
// file or a refused event is found before anything is written:
//   1. parse every tick file (parse_tick), refusing the whole import on the first bad one;
//   2. plan: which parent/blocker links survive (in the folder, an epic for a parent, no
//      cycle), the order that creates every link's target first, and each tick's events,
//      folded through reduce() with the ids the tickets will most likely get;
//   3. write: claim an id, append the tick's events in one durable append, refresh the
//      snapshot; the next tick's events name the ids actually claimed.

#include "cli/import_ticks.hpp"

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

namespace board::cli {
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

/// tk's fields every tick has that the board does not keep: listed once, not per tick.
constexpr std::array<std::string_view, 3> fields_not_kept{"owner", "created_by", "updated_at"};

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

// ---------------------------------------------------------------------------------------------
// Planning

/// A tick ready to import: the links that survive and its place in the order.
struct Planned {
    const Tick* tick = nullptr;
    std::string file;                   ///< `issues/<id>.json`, for messages
    std::string parent;                 ///< a tick id in the folder, or empty
    std::vector<std::string> blockers;  ///< tick ids in the folder
};

/// A tick's status on the board after import, for the report.
struct Imported {
    std::string tick;
    std::string id;
    std::string title;
    std::string status;
};

/// Local wall-clock time (tk's note stamps) to UTC, through the importing machine's zone.
UnixMillis local_to_utc(UnixMillis wall) {
    const std::time_t secs = static_cast<std::time_t>(wall / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    tm.tm_isdst = -1;
    const std::time_t local = std::mktime(&tm);
    return static_cast<UnixMillis>(local) * 1000 + wall % 1000;
}

/// The events that reproduce `tick`, as ticket `id`; `ids` maps tick ids to ticket ids.
/// Decisions the board cannot follow are added to `unmapped`.
std::vector<Event> events_for(const Planned& p,
                              const std::string& id,
                              const std::map<std::string, std::string>& ids,
                              const Actor& human,
                              std::vector<Unmapped>* unmapped) {
    const Tick& t = *p.tick;
    auto report = [&](std::string field, std::string value, std::string why) {
        if (unmapped)
            unmapped->push_back({t.id, std::move(field), std::move(value), std::move(why)});
    };
    std::vector<Event> events;
    UnixMillis last_at = t.created_at;
    auto push = [&](const Actor& by, UnixMillis at, Payload payload) {
        last_at = std::max(last_at, at);  // a log reads forward in time, whatever the stamps say
        Event e;
        e.seq = static_cast<std::int64_t>(events.size()) + 1;
        e.id = random_event_id();
        e.at = last_at;
        e.by = by;
        e.payload = std::move(payload);
        events.push_back(std::move(e));
    };

    // tk's legacy `manual: true` without `awaiting` reads as awaiting work (state-machine §2);
    // it is written as `awaiting`, never as `manual`.
    std::optional<Awaiting> awaiting = t.awaiting;
    if (!awaiting && t.manual) awaiting = Awaiting::work;

    Created c;
    c.ticket = id;
    c.title = t.title;
    c.description = t.description;
    if (!t.acceptance_criteria.empty()) {
        c.description += (c.description.empty() ? "" : "\n\n");
        c.description += "Acceptance criteria:\n" + t.acceptance_criteria;
    }
    c.kind = t.type;
    c.priority = t.priority;
    std::set<std::string> seen;
    for (const auto& label : t.labels) {
        if (label.empty()) {
            report("labels", "\"\"", "an empty label is not allowed on the board");
            continue;
        }
        if (seen.insert(label).second) c.labels.push_back(label);
    }
    c.labels.push_back("tk:" + t.id);  // where it came from; `board list -l tk:<id>` finds it
    if (!p.parent.empty()) c.parent = ids.at(p.parent);
    for (const auto& b : p.blockers) c.blocked_by.push_back(ids.at(b));
    c.requires_ = t.requires_;
    if (t.status == "open") c.awaiting = awaiting;
    push(human, t.created_at, c);

    Status column = Status::backlog;
    if (t.status == "in_progress") {
        if (t.type == TicketType::epic) {
            report("status",
                   "\"in_progress\"",
                   "an epic is never run on the board, its status derives from its children; "
                   "left in backlog");
        } else {
            // tk has one working state; on the board an agent's work starts with research.
            push(human, t.started_at.value_or(t.created_at), Started{});
            column = Status::research;
        }
    }
    for (const auto& note : t.notes) {
        const UnixMillis at = note.wall ? local_to_utc(*note.wall) : last_at;
        // As `board note` writes them: a human's as the person importing (tk records no name),
        // an agent's as the agent of the ticket's column.
        const Actor by =
            note.human ? human : Actor{ActorKind::agent, std::string{to_string(column)}};
        push(by, at, NoteAdded{note.text});
    }
    if (t.status == "in_progress" && awaiting) {
        Updated u;
        u.awaiting = std::optional<Awaiting>{*awaiting};
        push(human, last_at, u);
    }
    if (t.status == "closed") {
        if (awaiting)
            report(t.awaiting ? "awaiting" : "manual",
                   t.awaiting ? fmt::format("\"{}\"", to_string(*t.awaiting)) : "true",
                   "the tick is closed: a done ticket awaits nobody");
        const UnixMillis at = t.closed_at.value_or(last_at);
        if (t.verdict == "rejected") {
            // tk closes on a rejection only for input/escalation: the work will not be done.
            push(human, at, Cancelled{t.closed_reason});
        } else {
            // Closed as done: the human says the work is done (awaiting work, approved).
            Updated u;
            u.awaiting = std::optional<Awaiting>{Awaiting::work};
            push(human, at, u);
            push(human, at, VerdictGiven{Verdict::approved, t.closed_reason});
        }
    } else if (!t.verdict.empty()) {
        report("verdict",
               fmt::format("\"{}\"", t.verdict),
               "a verdict tk had not applied yet; give it again with board approve/reject");
    }
    return events;
}

/// The next free number for `prefix` on the board as allocate_ticket_id counts it, to name
/// the tickets in a dry run and in the check before writing.
long next_number(const fs::path& board, const std::string& prefix) {
    long max = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tickets_dir(board), ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix + "-", 0) != 0) continue;
        const std::string_view n = std::string_view{name}.substr(prefix.size() + 1);
        if (!all_digits(n) || n.size() > 9) continue;
        max = std::max<long>(max, std::stol(std::string{n}));
    }
    return max + 1;
}

std::string describe_status(const Ticket& t) {
    if (t.status == Status::done && t.resolution)
        return fmt::format("done/{}", to_string(*t.resolution));
    std::string s{to_string(t.status)};
    if (t.awaiting) s += fmt::format(" (awaiting {})", to_string(*t.awaiting));
    return s;
}

std::string render(const fs::path& source,
                   bool dry_run,
                   const std::vector<Imported>& imported,
                   const std::vector<Unmapped>& unmapped,
                   const Actor& by,
                   bool as_json) {
    if (as_json) {
        json::array tickets, lines;
        for (const auto& i : imported)
            tickets.push_back(json::object{
                {"tick", i.tick}, {"id", i.id}, {"title", i.title}, {"status", i.status}});
        for (const auto& u : unmapped)
            lines.push_back(json::object{
                {"tick", u.tick}, {"field", u.field}, {"value", u.value}, {"why", u.why}});
        json::array not_kept;
        for (const auto f : fields_not_kept) not_kept.emplace_back(f);
        return json::serialize(json::object{{"source", source.string()},
                                            {"dry_run", dry_run},
                                            {"imported", imported.size()},
                                            {"tickets", tickets},
                                            {"unmapped", lines},
                                            {"not_kept", not_kept}}) +
               "\n";
    }
    std::string out = fmt::format("{} {} tick(s) from {}\n",
                                  dry_run ? "Would import" : "Imported",
                                  imported.size(),
                                  source.string());
    for (const auto& i : imported)
        out += fmt::format("  {:<6} → {:<10} {:<32} {}\n", i.tick, i.id, i.status, i.title);
    if (!unmapped.empty()) {
        out += fmt::format("Not mapped ({}):\n", unmapped.size());
        for (const auto& u : unmapped)
            out += fmt::format("  {:<6} {}: {} ({})\n", u.tick, u.field, u.value, u.why);
    }
    out += fmt::format(
        "Not kept for any tick: owner, created_by, updated_at (the board has no owners; "
        "events are by {})\n",
        to_string(by));
    return out;
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

    for (const auto& [key, value] : object) {
        const bool read =
            std::find(read_fields.begin(), read_fields.end(), key) != read_fields.end();
        const bool not_kept =
            std::find(fields_not_kept.begin(), fields_not_kept.end(), key) != fields_not_kept.end();
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

CommandOutcome import_ticks(const Context& ctx, const ImportTicksRequest& request) {
    auto refuse = [](int code, std::string message) {
        return CommandOutcome{code, {}, "import-ticks: " + std::move(message), {}};
    };
    if (ctx.by.kind != ActorKind::human)
        return refuse(1,
                      "inside an agent run (BOARD_RUN is set): only a human imports a board, as "
                      "the import gives verdicts and moves tickets");

    // PATH is the `.tick` folder or the repository that holds one.
    std::error_code ec;
    fs::path tick_dir = request.source;
    if (!fs::is_directory(tick_dir / "issues", ec)) tick_dir = request.source / ".tick";
    if (!fs::is_directory(tick_dir / "issues", ec))
        return refuse(2,
                      fmt::format("{} holds no issues/ folder and no .tick/issues/ (expected tk's "
                                  ".tick folder or the repository that has one)",
                                  request.source.string()));

    // 1. Parse every tick file, in name order. The source is only ever opened for reading.
    std::vector<fs::path> files;
    std::vector<Unmapped> unmapped;
    for (const auto& entry : fs::directory_iterator(tick_dir / "issues", ec)) {
        const auto name = entry.path().filename().string();
        if (entry.is_regular_file(ec) && entry.path().extension() == ".json") {
            files.push_back(entry.path());
        } else {
            unmapped.push_back({name,
                                "file",
                                fmt::format("\"issues/{}\"", name),
                                "not a tick file (tk reads only issues/*.json); not imported"});
        }
    }
    if (ec)
        return refuse(
            3, fmt::format("cannot read {}: {}", (tick_dir / "issues").string(), ec.message()));
    std::sort(files.begin(), files.end());
    std::vector<Tick> ticks;
    std::vector<std::string> names;
    for (const auto& path : files) {
        const std::string name = "issues/" + path.filename().string();
        std::ifstream in{path, std::ios::binary};
        std::ostringstream text;
        text << in.rdbuf();
        if (!in && !in.eof()) return refuse(3, fmt::format("cannot read {}", path.string()));
        auto parsed = parse_tick(text.str(), (tick_dir / name).string());
        if (auto* error = std::get_if<std::string>(&parsed))
            return refuse(1, *error + "; nothing imported");
        Tick& tick = std::get<Tick>(parsed);
        if (tick.id != path.stem().string())
            return refuse(1,
                          fmt::format("{}: field \"id\": \"{}\" does not match the file name; "
                                      "nothing imported",
                                      (tick_dir / name).string(),
                                      tick.id));
        ticks.push_back(std::move(tick));
        names.push_back(name);
    }
    if (ticks.empty())
        return refuse(1, fmt::format("{} holds no tick (issues/*.json)", tick_dir.string()));

    // Already imported? The `tk:<id>` labels say so.
    auto loaded = load_catalog(ctx.board);
    if (auto* error = std::get_if<CatalogError>(&loaded)) return refuse(3, error->message);
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < ticks.size(); ++i) index[ticks[i].id] = i;
    std::vector<std::string> again;
    for (const auto& entry : std::get<CatalogLoad>(loaded).catalog.entries()) {
        for (const auto& label : entry.ticket.labels) {
            if (label.rfind("tk:", 0) == 0 && index.count(label.substr(3)))
                again.push_back(fmt::format("{} is {}", label.substr(3), entry.ticket.id));
        }
    }
    if (!again.empty()) {
        std::string list;
        for (const auto& a : again) list += (list.empty() ? "" : ", ") + a;
        return refuse(1,
                      fmt::format("already imported ({}; see board list --all -l tk:<id>); "
                                  "nothing imported",
                                  list));
    }

    // 2. Plan: links that survive, then an order that creates every target first.
    std::vector<Planned> plans(ticks.size());
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const Tick& t = ticks[i];
        Planned& p = plans[i];
        p.tick = &t;
        p.file = names[i];
        for (auto& u : t.unmapped) unmapped.push_back(u);
        if (!t.parent.empty()) {
            const auto it = index.find(t.parent);
            if (t.parent == t.id) {
                unmapped.push_back(
                    {t.id, "parent", fmt::format("\"{}\"", t.parent), "the tick itself"});
            } else if (it == index.end()) {
                unmapped.push_back({t.id,
                                    "parent",
                                    fmt::format("\"{}\"", t.parent),
                                    "no such tick in this .tick folder"});
            } else if (ticks[it->second].type != TicketType::epic) {
                unmapped.push_back({t.id,
                                    "parent",
                                    fmt::format("\"{}\"", t.parent),
                                    fmt::format("{} is a {}, and a board parent is an epic",
                                                t.parent,
                                                to_string(ticks[it->second].type))});
            } else {
                p.parent = t.parent;
            }
        }
        std::set<std::string> seen;
        for (const auto& b : t.blocked_by) {
            if (!seen.insert(b).second) continue;  // tk allows duplicates; one says it all
            if (b == t.id) {
                unmapped.push_back(
                    {t.id, "blocked_by", fmt::format("\"{}\"", b), "the tick blocks itself"});
            } else if (!index.count(b)) {
                unmapped.push_back({t.id,
                                    "blocked_by",
                                    fmt::format("\"{}\"", b),
                                    "no such tick in this .tick folder"});
            } else {
                p.blockers.push_back(b);
            }
        }
    }
    // Depth first from the oldest tick; a link back to a tick still being visited would close
    // a cycle (tk never checks): it is reported and left out.
    std::vector<std::size_t> by_age(ticks.size());
    for (std::size_t i = 0; i < by_age.size(); ++i) by_age[i] = i;
    std::stable_sort(by_age.begin(), by_age.end(), [&](std::size_t a, std::size_t b) {
        return ticks[a].created_at < ticks[b].created_at;
    });
    std::vector<int> state(ticks.size(), 0);  // 0 new, 1 visiting, 2 placed
    std::vector<std::size_t> order;
    auto visit = [&](auto&& self, std::size_t i) -> void {
        state[i] = 1;
        Planned& p = plans[i];
        auto keep = [&](const std::string& target, std::string_view field) {
            const std::size_t j = index.at(target);
            if (state[j] == 1) {
                unmapped.push_back(
                    {p.tick->id,
                     std::string{field},
                     fmt::format("\"{}\"", target),
                     fmt::format("{} already depends on {}: a cycle", target, p.tick->id)});
                return false;
            }
            if (state[j] == 0) self(self, j);
            return true;
        };
        if (!p.parent.empty() && !keep(p.parent, "parent")) p.parent.clear();
        std::erase_if(p.blockers, [&](const std::string& b) { return !keep(b, "blocked_by"); });
        state[i] = 2;
        order.push_back(i);
    };
    for (const std::size_t i : by_age)
        if (state[i] == 0) visit(visit, i);

    auto config = load_board_config(ctx.board / "board.yaml");
    if (!config)
        return refuse(
            3, fmt::format("{}: {}", (ctx.board / "board.yaml").string(), config.error().message));
    const std::string prefix = config.value().prefix;

    // Fold every ticket's events with the ids they will most likely get: a refusal here is
    // found before anything is written (the reducer checks ids by form, not by number).
    std::map<std::string, std::string> ids;
    long n = next_number(ctx.board, prefix);
    for (const std::size_t i : order) ids[ticks[i].id] = fmt::format("{}-{}", prefix, n++);
    std::vector<Imported> imported;
    for (const std::size_t i : order) {
        const Planned& p = plans[i];
        const auto events = events_for(p, ids.at(p.tick->id), ids, ctx.by, &unmapped);
        const Folded folded = fold(events);
        if (folded.failure) {
            const auto& [at, why] = *folded.failure;
            return refuse(1,
                          fmt::format("tick {} ({}): the board refuses its {} event: {}; nothing "
                                      "imported",
                                      p.tick->id,
                                      p.file,
                                      type_name(events[at].payload),
                                      why.message));
        }
        imported.push_back(
            {p.tick->id, ids.at(p.tick->id), p.tick->title, describe_status(folded.ticket)});
    }
    if (request.dry_run)
        return {0, render(tick_dir, true, imported, unmapped, ctx.by, ctx.json), {}, {}};

    // 3. Write, tick by tick, naming the ids actually claimed.
    imported.clear();
    CommandOutcome out;
    ids.clear();
    for (const std::size_t i : order) {
        const Planned& p = plans[i];
        auto id = allocate_ticket_id(ctx.board, prefix);
        if (!id) {
            out.exit_code = 3;
            out.message = fmt::format("import-ticks: tick {}: {}; {} tick(s) imported before it",
                                      p.tick->id,
                                      id.error().message,
                                      imported.size());
            break;
        }
        ids[p.tick->id] = id.value();
        const fs::path dir = ctx.board / "tickets" / id.value();
        auto result = append_events(dir, events_for(p, id.value(), ids, ctx.by, nullptr), 0);
        if (const auto* ok = std::get_if<Committed>(&result)) {
            if (auto failed = write_snapshot(dir, *ok->ticket)) out.warnings.push_back(*failed);
            imported.push_back(
                {p.tick->id, id.value(), p.tick->title, describe_status(*ok->ticket)});
            continue;
        }
        // Nothing was written for this id: give the number back, as create does.
        fs::remove_all(dir, ec);
        std::string why;
        out.exit_code = 3;
        if (const auto* no = std::get_if<Refused>(&result)) {
            why = no->rejection.message;
            out.exit_code = 1;
        } else if (const auto* conflict = std::get_if<Conflict>(&result)) {
            why = conflict->message;
        } else {
            why = std::get<LogError>(result).message;
        }
        out.message = fmt::format("import-ticks: tick {} ({}): {}; {} tick(s) imported before it",
                                  p.tick->id,
                                  p.file,
                                  why,
                                  imported.size());
        break;
    }
    out.output = render(tick_dir, false, imported, unmapped, ctx.by, ctx.json);
    return out;
}

std::string import_ticks_help() {
    return R"(Reads tk's .tick/issues/*.json and writes nothing under PATH. Each tick becomes a
ticket with the label tk:<tick id>; parents and blockers are created first.
  open                  → backlog (awaiting kept; manual: true → awaiting work)
  in_progress           → research (started by you: tk has one working state)
  closed                → done/completed (your approval, closed_reason as its note);
                          done/wont_do if tk's verdict was rejected (cancelled)
  notes                 → notes, [human] ones by you, others by the agent; tk's local
                          note times are read in this machine's time zone
  acceptance_criteria   → appended to the description
Reported, not imported: after, target_date, defer_until, external_ref, discovered_from,
role, base_branch, trace_id, unknown fields, a pending verdict, blockers or parents not in
the folder, a parent that is not an epic, links that would close a cycle. owner,
created_by and updated_at are not kept. Refused if a tk:<id> label is already on the board.

Examples:
  board import-ticks ../old-repo/.tick --dry-run
  board import-ticks ../old-repo
  board import-ticks ../old-repo/.tick --json | jq '.unmapped[]'
)";
}

}  // namespace board::cli
