#include "orchestrator/own_writes.hpp"

#include <board/catalog.hpp>

#include <boost/asio/post.hpp>

namespace board::orchestrator {

OwnWrites::OwnWrites(const std::filesystem::path& board_root,
                     KnownTickets& known,
                     Reporter& reporter)
    : writer_(board_root)
    , known_(known)
    , reporter_(reporter)
    , tickets_dir_(board_root / "tickets") {}

void OwnWrites::use_disk(boost::asio::any_io_executor disk, boost::asio::any_io_executor io) {
    disk_ = disk;
    io_ = std::move(io);
    snapshots_.emplace(boost::asio::make_strand(std::move(disk)));
}

void OwnWrites::refresh_ticket_json(std::shared_ptr<const Ticket> ticket) {
    const auto write = [this, ticket] {
        return write_snapshot(tickets_dir_ / ticket->id, *ticket);
    };
    if (!snapshots_) {
        if (auto failed = write()) reporter_.problem("board-daemon: " + *failed);
        return;
    }
    boost::asio::post(*snapshots_, [this, write] {
        if (auto failed = write())
            boost::asio::post(io_, [this, problem = std::move(*failed)] {
                reporter_.problem("board-daemon: " + problem);
            });
    });
}

OwnWrites::Written OwnWrites::commit(const std::string& id,
                                     const app::Author& build,
                                     std::optional<std::int64_t> expected_seq,
                                     bool refresh_snapshot,
                                     bool run_result) {
    return committed(
        id, writer_.record(id, build, expected_seq, false), refresh_snapshot, run_result);
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
    auto recorded = co_await on_disk(disk_, [&] {
        if (around.before) around.before();
        auto written = writer_.record(id, build, expected_seq, false);
        if (written && around.after) around.after(*written.value().ticket);
        return written;
    });
    --known_.entry(id).own_writes_in_flight;
    co_return committed(id, std::move(recorded), refresh_snapshot, run_result);
}

OwnWrites::Written OwnWrites::committed(const std::string& id,
                                        app::Result<app::Recorded> recorded,
                                        bool refresh_snapshot,
                                        bool run_result) {
    if (!recorded) {
        // A run happened and its end is not on the log: the daemon must not end as if it were.
        if (run_result && recorded.error().kind == app::Refusal::Kind::storage) ++results_lost_;
        if (recorded.error().kind != app::Refusal::Kind::conflict)
            reporter_.problem("board-daemon: " + recorded.error().message);
        return std::nullopt;
    }
    auto& entry = known_.entry(id);
    known_.set(id, recorded.value().ticket);
    entry.own_seq = recorded.value().ticket->seq;
    // Not stamped: another writer may have appended right after, so the next look at this
    // ticket reads it again.
    entry.stamp = KnownTickets::LogStamp{};
    for (const auto& w : recorded.value().warnings) reporter_.problem("board-daemon: " + w);
    for (const auto& e : recorded.value().events) reporter_.event(id, e);
    if (refresh_snapshot) refresh_ticket_json(recorded.value().ticket);
    return recorded.value().ticket;
}

}  // namespace board::orchestrator
