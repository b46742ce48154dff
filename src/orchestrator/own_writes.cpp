#include "orchestrator/own_writes.hpp"

#include <board/catalog.hpp>
#include <board/event_log.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <exception>

namespace board::orchestrator {

OwnWrites::OwnWrites(const std::filesystem::path& board_root,
                     KnownTickets& known,
                     Reporter& reporter,
                     std::chrono::milliseconds retry_after)
    : writer_(board_root)
    , known_(known)
    , reporter_(reporter)
    , tickets_dir_(board_root / "tickets")
    , retry_after_(retry_after) {}

void OwnWrites::use_disk(boost::asio::any_io_executor disk) {
    disk_ = disk;
    snapshots_.emplace(boost::asio::make_strand(std::move(disk)));
}

void OwnWrites::refresh_ticket_json(const std::string& id) {
    // The log as it is when the refresh runs, not the ticket this write made: another writer
    // (a person's `board`, the page) may have appended and refreshed it since, and a refresh
    // must not put an older state back.
    const auto refresh = [this, id] {
        const auto dir = tickets_dir_ / id;
        auto loaded = load_ticket(dir);
        std::optional<std::string> failed;
        if (const auto* error = std::get_if<LogError>(&loaded))
            failed = "ticket.json of " + id + " not refreshed: " + error->message;
        else
            failed = write_snapshot(dir, std::get<Loaded>(loaded).ticket);
        if (!failed) return;
        const std::lock_guard lock(failures_mutex_);
        snapshot_failures_.push_back(std::move(*failed));
    };
    if (snapshots_)
        boost::asio::post(*snapshots_, refresh);
    else
        refresh();
}

void OwnWrites::report_snapshot_failures() {
    std::vector<std::string> failures;
    {
        const std::lock_guard lock(failures_mutex_);
        failures.swap(snapshot_failures_);
    }
    for (const auto& failure : failures) reporter_.problem("board-daemon: " + failure);
}

OwnWrites::Written OwnWrites::commit(const std::string& id,
                                     const app::Author& build,
                                     std::optional<std::int64_t> expected_seq,
                                     bool refresh_snapshot,
                                     bool run_result) {
    beginning(id);
    std::optional<app::Result<app::Recorded>> recorded;
    try {
        recorded.emplace(writer_.record(id, build, expected_seq, false));
    } catch (...) {
        write_ended(id, -1);
        throw;
    }
    return committed(id, std::move(*recorded), refresh_snapshot, run_result);
}

boost::asio::awaitable<OwnWrites::Written> OwnWrites::commit_on_disk(
    std::string id,
    app::Author build,
    std::optional<std::int64_t> expected_seq,
    bool refresh_snapshot,
    bool run_result,
    Around around) {
    // While the write is on its way, a change the watcher sees in this log is the daemon's
    // own, not a person's (no debounce for it).
    beginning(id);
    ++known_.entry(id).own_writes_in_flight;
    std::optional<app::Result<app::Recorded>> recorded;
    std::exception_ptr failed;
    try {
        recorded.emplace(co_await on_disk(disk_, [&] {
            if (around.before) around.before();
            auto written = writer_.record(id, build, expected_seq, false);
            if (written && around.after) around.after(*written.value().ticket);
            return written;
        }));
    } catch (...) {
        failed = std::current_exception();
    }
    // Given back however the write ended, or every later change a person makes to this
    // ticket would be taken for the daemon's own.
    --known_.entry(id).own_writes_in_flight;
    if (failed) {
        write_ended(id, -1);
        std::rethrow_exception(failed);
    }
    co_return committed(id, std::move(*recorded), refresh_snapshot, run_result);
}

void OwnWrites::beginning(const std::string& id) {
    auto& entry = known_.entry(id);
    if (!entry.judged_after) entry.judged_after = entry.ticket ? entry.ticket->seq : -1;
}

bool OwnWrites::write_ended(const std::string& id, std::int64_t written_seq) {
    auto& entry = known_.entry(id);
    const bool reloaded = entry.reloaded_in_flight;
    // The last of overlapping writes judges: before it, another's seqs are not all known.
    if (entry.own_writes_in_flight > 0 || !entry.judged_after) return reloaded;
    const std::int64_t after = *entry.judged_after;
    const std::int64_t top = std::max(written_seq, entry.ticket ? entry.ticket->seq : -1);
    const auto own = std::count_if(entry.own_appended.begin(),
                                   entry.own_appended.end(),
                                   [&](std::int64_t seq) { return seq > after && seq <= top; });
    entry.judged_after.reset();
    entry.own_appended.clear();
    entry.reloaded_in_flight = false;
    // Another writer's events beside the daemon's are a person's change like any other, even
    // while a write was on its way (when a notified reload cannot tell whose they are): they
    // are the seqs the daemon did not append.
    if (after >= 0 && top - after > own) known_.changed_by_others(id);
    return reloaded;
}

OwnWrites::Written OwnWrites::committed(const std::string& id,
                                        app::Result<app::Recorded> recorded,
                                        bool refresh_snapshot,
                                        bool run_result) {
    auto& entry = known_.entry(id);
    if (!recorded) {
        // A run happened and its end is not on the log: the daemon must not end as if it were.
        if (run_result && recorded.error().kind == app::Refusal::Kind::storage) ++results_lost_;
        if (recorded.error().kind != app::Refusal::Kind::conflict) {
            reporter_.problem("board-daemon: " + recorded.error().message);
            entry.available_at =
                std::max(entry.available_at, KnownTickets::Clock::now() + retry_after_);
        }
        write_ended(id, -1);
        return std::nullopt;
    }
    const auto& written = recorded.value().ticket;
    for (const auto& e : recorded.value().events) entry.own_appended.push_back(e.seq);
    const bool reloaded = write_ended(id, written->seq);
    entry.own_seq = written->seq;
    const bool read_other_log = reloaded && (!entry.ticket || entry.ticket->seq != written->seq);
    if (read_other_log) {
        // A reload while the write was on its way read a log other than the one written (a
        // newer one, an older one copied over it, or none): it is read again, not replaced
        // by the ticket as written.
        known_.reload(id, true);
    } else if (entry.ticket && entry.ticket->seq > written->seq) {
        // Another write of its own, made while this one was on its way, is newer: kept.
        entry.own_seq = entry.ticket->seq;
    } else {
        known_.set(id, written);
        // Not stamped: another writer may have appended right after, so the next look at
        // this ticket reads it again.
        entry.stamp = FileStamp{};
    }
    for (const auto& w : recorded.value().warnings) reporter_.problem("board-daemon: " + w);
    for (const auto& e : recorded.value().events) reporter_.event(id, e);
    if (refresh_snapshot) refresh_ticket_json(id);
    return written;
}

}  // namespace board::orchestrator
