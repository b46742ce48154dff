#include "orchestrator/known_tickets.hpp"

#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace board::orchestrator {

namespace fs = std::filesystem;

namespace {

/// What the daemon keeps of a ticket while no run of it starts: what next_action(), the
/// planner, recovery, notifications and question timeouts read (summarize() and the
/// questions), not its description, notes and artifacts. A run is made from the ticket as its
/// run-started commit read it from the log; a pull request's body from the log as well.
std::shared_ptr<const Ticket> kept_between_runs(const Ticket& full) {
    auto kept = std::make_shared<Ticket>();
    static_cast<TicketSummary&>(*kept) = summarize(full).ticket;
    kept->questions = full.questions;
    return kept;
}

}  // namespace

bool KnownTickets::IdOrder::operator()(const std::string& a, const std::string& b) const {
    return id_less(a, b);
}

KnownTickets::KnownTickets(
    fs::path tickets_dir,
    Reporter& reporter,
    std::chrono::milliseconds debounce,
    std::function<void(const std::string&, const Ticket*, const Ticket*)> changed,
    std::function<void(const std::string&)> first_seen)
    : tickets_dir_(std::move(tickets_dir))
    , reporter_(reporter)
    , debounce_(debounce)
    , changed_(std::move(changed))
    , first_seen_(std::move(first_seen)) {}

KnownTickets::Entry& KnownTickets::entry(const std::string& id) {
    auto it = map_.find(id);
    if (it == map_.end()) {
        it = map_.emplace(id, Entry{tickets_dir_ / id}).first;
        first_seen_(id);
    }
    return it->second;
}

void KnownTickets::scan() {
    std::error_code ec;
    for (fs::directory_iterator it(tickets_dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_valid_ticket_id(name) || !it->is_directory(ec)) continue;
        entry(name);
    }
    if (ec)
        reporter_.problem(fmt::format("board-daemon: {}: {}", tickets_dir_.string(), ec.message()));
    for (auto& [id, known] : map_) reload(id, false);
    scanned_once_ = true;
}

void KnownTickets::reload(const std::string& id, bool notified) {
    Entry& known = entry(id);
    const auto stamp = stamp_of(known.dir / log_file_name);
    if (!notified && stamp && known.ticket && *stamp == known.stamp) return;  // unchanged
    if (known.own_writes_in_flight > 0) known.reloaded_in_flight = true;
    auto loaded = load_ticket(known.dir);
    if (auto* error = std::get_if<LogError>(&loaded)) {
        if (error->kind == LogError::Kind::not_found) {
            // A ticket being created has no log yet; one whose log (or folder) was removed is
            // no longer on the board.
            if (known.ticket) {
                set(id, nullptr);
                known.stamp = FileStamp{};
            }
            return;
        }
        if (known.problem != error->message) {
            reporter_.problem(
                fmt::format("board-daemon: {} skipped until fixed: {}", id, error->message));
            known.problem = error->message;
        }
        set(id, nullptr);
        return;
    }
    auto& value = std::get<Loaded>(loaded);
    for (const auto& warning : value.report.warnings) reporter_.problem("board-daemon: " + warning);
    known.problem.clear();
    if (value.ticket.id.empty()) return;  // no events yet
    // A log that went back (a `git checkout`, a copy of an older one) is never the daemon's
    // doing, even while a write of its own is on its way.
    const bool rewound = known.ticket && value.ticket.seq < known.ticket->seq;
    const bool external = rewound || (known.own_writes_in_flight == 0 && known.own_seq >= 0 &&
                                      value.ticket.seq != known.own_seq &&
                                      (!known.ticket || value.ticket.seq != known.ticket->seq));
    if (known.own_seq < 0) {
        known.own_seq = value.ticket.seq;
        // A ticket made while the daemon runs is as fresh as an edited one (agents.md: picked
        // up only after daemon.debounce); those found by the first scan have waited already.
        if (scanned_once_) known.available_at = Clock::now() + debounce_;
    }
    if (external) {
        changed_by_others(id);
        known.own_seq = value.ticket.seq;
    }
    set(id, std::make_shared<const Ticket>(std::move(value.ticket)));
    known.stamp = stamp.value_or(FileStamp{});
}

void KnownTickets::changed_by_others(const std::string& id) {
    Entry& known = entry(id);
    known.available_at = std::max(known.available_at, Clock::now() + debounce_);
}

void KnownTickets::set(const std::string& id, std::shared_ptr<const Ticket> ticket) {
    Entry& known = entry(id);
    changed_(id, known.ticket.get(), ticket.get());
    known.ticket = ticket ? kept_between_runs(*ticket) : nullptr;
}

BoardSnapshot KnownTickets::snapshot(app::LiveBoard& live, const Policy& policy) const {
    BoardSnapshot s;
    for (const auto& [id, entry] : map_) {
        if (entry.ticket) s.tickets.push_back(entry.ticket);
    }
    if (const auto board = live.current()) {
        const Catalog& catalog = board.value()->catalog;
        const app::Standings standings(catalog, policy, wall_clock_now());
        for (const auto& entry : catalog.entries()) {
            auto standing = standings.of(entry.ticket);
            using Kind = app::Standing::Kind;
            if (standing.kind == Kind::wip_held || standing.kind == Kind::blocked ||
                standing.kind == Kind::backing_off)
                s.held.push_back(HeldTicket{entry.ticket.id, std::move(standing)});
        }
    }
    return s;
}

}  // namespace board::orchestrator
