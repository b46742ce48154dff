// `board import-ticks PATH`: tk's `.tick/issues/*.json` to tickets. Three steps, so that a bad
// file or a refused event is found before anything is written:
//   1. parse every tick file (parse_tick), refusing the whole import on the first bad one;
//   2. plan: which parent/blocker links survive (in the folder, an epic for a parent, no
//      cycle), the order that creates every link's target first, and each tick's events,
//      folded through reduce() with the ids the tickets will most likely get;
//   3. write: claim an id, append the tick's events in one durable append, refresh the
//      snapshot; the next tick's events name the ids actually claimed.

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
// Planning

/// A tick ready to import: the links that survive and its place in the order.
struct Planned {
    const Tick* tick = nullptr;
    std::string file;                   ///< `issues/<id>.json`, for messages
    std::string parent;                 ///< a tick id in the folder, or empty
    std::vector<std::string> blockers;  ///< tick ids in the folder
};

using Imported = ImportReport::Imported;

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
                              std::vector<UnmappedField>* unmapped) {
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

/// The next free number for `prefix` on the board as create_ticket_folder counts it, to name
/// the tickets in a dry run and in the check before writing.
long next_number(const fs::path& board, const std::string& prefix) {
    long max = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tickets_dir(board), ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix + "-", 0) != 0) continue;
        const std::string_view n = std::string_view{name}.substr(prefix.size() + 1);
        if (!is_valid_ticket_id(name)) continue;
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

}  // namespace

Result<ImportReport> Board::import_ticks(const ImportTicksRequest& request, const Actor& by) {
    auto refuse = [](Refusal::Kind kind, std::string message) {
        return Refusal{kind, "import-ticks: " + std::move(message), {}};
    };
    using Kind = Refusal::Kind;
    if (by.kind != ActorKind::human)
        return refuse(Kind::refused,
                      "inside an agent run (BOARD_RUN is set): only a human imports a board, as "
                      "the import gives verdicts and moves tickets");

    // PATH is the `.tick` folder or the repository that holds one.
    std::error_code ec;
    fs::path tick_dir = request.source;
    if (!fs::is_directory(tick_dir / "issues", ec)) tick_dir = request.source / ".tick";
    if (!fs::is_directory(tick_dir / "issues", ec))
        return refuse(Kind::invalid,
                      fmt::format("{} holds no issues/ folder and no .tick/issues/ (expected tk's "
                                  ".tick folder or the repository that has one)",
                                  request.source.string()));

    // 1. Parse every tick file, in name order. The source is only ever opened for reading.
    std::vector<fs::path> files;
    std::vector<UnmappedField> unmapped;
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
            Kind::storage,
            fmt::format("cannot read {}: {}", (tick_dir / "issues").string(), ec.message()));
    std::sort(files.begin(), files.end());
    std::vector<Tick> ticks;
    std::vector<std::string> names;
    for (const auto& path : files) {
        const std::string name = "issues/" + path.filename().string();
        std::ifstream in{path, std::ios::binary};
        std::ostringstream text;
        text << in.rdbuf();
        if (!in && !in.eof())
            return refuse(Kind::storage, fmt::format("cannot read {}", path.string()));
        auto parsed = parse_tick(text.str(), (tick_dir / name).string());
        if (auto* error = std::get_if<std::string>(&parsed))
            return refuse(Kind::refused, *error + "; nothing imported");
        Tick& tick = std::get<Tick>(parsed);
        if (tick.id != path.stem().string())
            return refuse(Kind::refused,
                          fmt::format("{}: field \"id\": \"{}\" does not match the file name; "
                                      "nothing imported",
                                      (tick_dir / name).string(),
                                      tick.id));
        ticks.push_back(std::move(tick));
        names.push_back(name);
    }
    if (ticks.empty())
        return refuse(Kind::refused,
                      fmt::format("{} holds no tick (issues/*.json)", tick_dir.string()));

    // Already imported? The `tk:<id>` labels say so.
    auto loaded = load_catalog(root_);
    if (auto* error = std::get_if<CatalogError>(&loaded))
        return refuse(Kind::storage, error->message);
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
        return refuse(Kind::refused,
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

    auto config = load_board_config(root_ / "board.yaml");
    if (!config)
        return refuse(
            Kind::storage,
            fmt::format("{}: {}", (root_ / "board.yaml").string(), config.error().message));
    const std::string prefix = config.value().prefix;

    // Fold every ticket's events with the ids they will most likely get: a refusal here is
    // found before anything is written (the reducer checks ids by form, not by number).
    std::map<std::string, std::string> ids;
    long n = next_number(root_, prefix);
    for (const std::size_t i : order) ids[ticks[i].id] = fmt::format("{}-{}", prefix, n++);
    std::vector<Imported> imported;
    for (const std::size_t i : order) {
        const Planned& p = plans[i];
        const auto events = events_for(p, ids.at(p.tick->id), ids, by, &unmapped);
        const Folded folded = fold(events);
        if (folded.failure) {
            const auto& [at, why] = *folded.failure;
            return refuse(Kind::refused,
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
    ImportReport report;
    report.source = tick_dir;
    report.unmapped = std::move(unmapped);
    for (const auto field : tick_fields_not_kept) report.fields_not_kept.emplace_back(field);
    if (request.dry_run) {
        report.dry_run = true;
        report.imported = std::move(imported);
        return report;
    }

    // 3. Write, tick by tick, naming the ids actually claimed.
    ids.clear();
    for (const std::size_t i : order) {
        const Planned& p = plans[i];
        std::optional<AppendResult> result;
        const TicketFiller fill = [&](const std::string& new_id, const fs::path& folder) {
            ids[p.tick->id] = new_id;
            result = append_events(folder, events_for(p, new_id, ids, by, nullptr), 0);
            const auto* ok = std::get_if<Committed>(&*result);
            if (!ok) return false;
            if (auto failed = write_snapshot(folder, *ok->ticket))
                report.warnings.push_back(*failed);
            return true;
        };
        auto id = create_ticket_folder(root_, prefix, fill);
        if (id) {
            report.imported.push_back({p.tick->id,
                                       id.value(),
                                       p.tick->title,
                                       describe_status(*std::get<Committed>(*result).ticket)});
            continue;
        }
        std::string why = id.error().message;
        Kind kind = Kind::storage;
        if (id.error().kind == BoardDirError::Kind::declined && result) {
            if (const auto* no = std::get_if<Refused>(&*result)) {
                why = no->rejection.message;
                kind = Kind::refused;
            } else if (const auto* conflict = std::get_if<Conflict>(&*result)) {
                why = conflict->message;
            } else {
                why = std::get<LogError>(*result).message;
            }
        }
        report.stopped = refuse(kind,
                                fmt::format("tick {} ({}): {}; {} tick(s) imported before it",
                                            p.tick->id,
                                            p.file,
                                            why,
                                            report.imported.size()));
        break;
    }
    return report;
}

}  // namespace board::app
