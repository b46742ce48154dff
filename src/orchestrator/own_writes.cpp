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
    const std::int64_t known = known_seq(id);
    return committed(
        id, writer_.record(id, build, expected_seq, false), known, refresh_snapshot, run_result);
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
    ++known_.entry(id).own_writes_in_flight;
    const std::int64_t known = known_seq(id);
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
    if (failed) std::rethrow_exception(failed);
    co_return committed(id, std::move(*recorded), known, refresh_snapshot, run_result);
}

std::int64_t OwnWrites::known_seq(const std::string& id) {
    const auto& ticket = known_.entry(id).ticket;
    return ticket ? ticket->seq : -1;
}

OwnWrites::Written OwnWrites::committed(const std::string& id,
                                        app::Result<app::Recorded> recorded,
                                        std::int64_t known_seq,
                                        bool refresh_snapshot,
                                        bool run_result) {
    if (!recorded) {
        // A run happened and its end is not on the log: the daemon must not end as if it were.
        if (run_result && recorded.error().kind == app::Refusal::Kind::storage) ++results_lost_;
        if (recorded.error().kind != app::Refusal::Kind::conflict) {
            reporter_.problem("board-daemon: " + recorded.error().message);
            auto& entry = known_.entry(id);
            entry.available_at =
                std::max(entry.available_at, KnownTickets::Clock::now() + retry_after_);
        }
        return std::nullopt;
    }
    auto& entry = known_.entry(id);
    const auto& written = recorded.value().ticket;
    const auto own_events = static_cast<std::int64_t>(recorded.value().events.size());
    // Another writer's events beside the daemon's are a person's change like any other, even
    // while this write was on its way (when a notified reload cannot tell whose they are):
    // before them in the log (the write was built on them), or after them (a reload while the
    // write was on its way read them already, and what it read is newer than this).
    const bool others_before = known_seq >= 0 && written->seq - own_events > known_seq;
    const bool newer_known = entry.ticket && entry.ticket->seq > written->seq;
    if (others_before || newer_known) known_.changed_by_others(id);
    if (newer_known) {
        entry.own_seq = entry.ticket->seq;
    } else {
        known_.set(id, written);
        entry.own_seq = written->seq;
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
