#pragma once
// The daemon's own appends (app::Board::record), on the io thread or its disk threads, and
// what it learns from each: the ticket as written goes into KnownTickets (and from there to
// every reader), warnings and events are reported, and a run whose end the disk refused is
// counted so the daemon does not end as if it were recorded.

#include "orchestrator/disk_work.hpp"
#include "orchestrator/known_tickets.hpp"
#include "orchestrator/reporter.hpp"

#include <board/app.hpp>
#include <board/ticket.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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

    OwnWrites(const std::filesystem::path& board_root, KnownTickets& known, Reporter& reporter);

    /// Where commit_on_disk writes: the disk threads (disk_work.hpp), which must stop before
    /// this goes; null: on the caller's thread.
    void use_disk(boost::asio::any_io_executor disk) { disk_ = std::move(disk); }

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
    Written committed(const std::string& id, app::Result<app::Recorded> recorded, bool run_result);

    /// A board that keeps nothing, so it is safe on the disk threads.
    app::Board writer_;
    KnownTickets& known_;
    Reporter& reporter_;
    boost::asio::any_io_executor disk_;
    int results_lost_ = 0;
};

}  // namespace board::orchestrator
