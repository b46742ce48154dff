#pragma once
// The daemon's own appends (app::Board::record), on the io thread or its disk threads, and
// what it learns from each: the ticket as written goes into KnownTickets (and from there to
// every reader), warnings and events are reported, and a run whose end the disk refused is
// counted so the daemon does not end as if it were recorded. `ticket.json` (a cache for
// people and tools, which no query reads) is refreshed after the write and off its path: a
// run's slot is not held for it.

#include "orchestrator/disk_work.hpp"
#include "orchestrator/known_tickets.hpp"
#include "orchestrator/reporter.hpp"

#include <board/app.hpp>
#include <board/ticket.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

class OwnWrites {
public:
    using Written = std::optional<std::shared_ptr<const Ticket>>;

    /// File work that goes with a commit on the same disk thread: `before` it (what the
    /// events are made from), and `after` it once it is durable (given the ticket as written).
    struct Around {
        std::function<void()> before;
        std::function<void(const Ticket&)> after;
    };

    /// A write refused for any reason but a conflict (a full disk, a log the rules refuse, a
    /// ticket gone) holds its ticket for `retry_after` before the planner tries it again: the
    /// same refusal at once would only be reported again, as fast as the disk answers.
    OwnWrites(const std::filesystem::path& board_root,
              KnownTickets& known,
              Reporter& reporter,
              std::chrono::milliseconds retry_after);

    /// Where commit_on_disk writes and `ticket.json` is refreshed: the disk threads
    /// (disk_work.hpp), which must finish their work and stop before this goes. Without them,
    /// everything is done on the caller's thread.
    void use_disk(boost::asio::any_io_executor disk);

    /// Reports the refreshes of `ticket.json` that failed since the last call (on the io
    /// thread: the disk threads only collect them).
    void report_snapshot_failures();

    /// Lets go of the disk threads, before they go (their strand holds on to their pool).
    void stop_using_disk() {
        snapshots_.reset();
        disk_ = {};
    }

    /// Appends what `build` makes of the ticket as it is on disk; the ticket after it, or
    /// nothing when it was not written (a refusal is reported; a ticket that moved on is
    /// planned again). `refresh_snapshot` false: `ticket.json` waits for a later write (a
    /// run's start leaves it to the run's end). `run_result`: the last try to record how a
    /// run ended.
    Written commit(const std::string& id,
                   const app::Author& build,
                   std::optional<std::int64_t> expected_seq = {},
                   bool refresh_snapshot = true,
                   bool run_result = false);

    /// commit() with the write on the disk threads; `build` and `around` must use only what
    /// they are given.
    boost::asio::awaitable<Written> commit_on_disk(std::string id,
                                                   app::Author build,
                                                   std::optional<std::int64_t> expected_seq = {},
                                                   bool refresh_snapshot = true,
                                                   bool run_result = false,
                                                   Around around = {});

    /// Runs whose end could not be recorded (each reported when it happened).
    int results_lost() const { return results_lost_; }

private:
    Written committed(const std::string& id,
                      app::Result<app::Recorded> recorded,
                      bool refresh_snapshot,
                      bool run_result);

    /// Notes what was known of `id` as a write of its own begins (see Entry::judged_after).
    void beginning(const std::string& id);
    /// A write of its own to `id` ended (`written_seq` -1: nothing written). Once none is on
    /// its way any more: debounces `id` when another writer appended since the first of them
    /// began, and forgets them. Returns whether the log was read while a write was on its way.
    bool write_ended(const std::string& id, std::int64_t written_seq);

    /// `ticket.json` of ticket `id` made again from its log, on the disk threads one at a
    /// time; a failure is kept for report_snapshot_failures().
    void refresh_ticket_json(const std::string& id);

    /// A board that keeps nothing, so it is safe on the disk threads.
    app::Board writer_;
    KnownTickets& known_;
    Reporter& reporter_;
    std::filesystem::path tickets_dir_;
    boost::asio::any_io_executor disk_;
    std::optional<boost::asio::strand<boost::asio::any_io_executor>> snapshots_;
    std::mutex failures_mutex_;
    std::vector<std::string> snapshot_failures_;  ///< guarded by failures_mutex_
    int results_lost_ = 0;
    std::chrono::milliseconds retry_after_;
};

}  // namespace board::orchestrator
