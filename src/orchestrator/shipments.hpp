#pragma once
// The daemon's shipping: every done ticket that owes it is shipped (shipping.hpp does the git
// work), one ship at a time per ticket and at most one try per state of its log, and a
// cancelled ticket's worktree is removed (its branch, the work, stays). What a ship came to
// is recorded through the daemon's own writes.

#include "orchestrator/reporter.hpp"
#include "orchestrator/shipping.hpp"

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/ticket.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace board::orchestrator {

class Shipments {
public:
    /// Appends what `build` makes, against the ticket at `seq`; true when it was written.
    using Record = std::function<boost::asio::awaitable<bool>(
        std::string id, app::Author build, std::int64_t seq)>;

    Shipments(boost::asio::io_context& io,
              std::filesystem::path board_root,
              ShipConfig config,
              Reporter& reporter,
              Record record,
              std::function<void()> wake);

    /// Where a ship reads the ticket's log: the daemon's disk threads (disk_work.hpp), made
    /// after this; without them, inline.
    void use_disk(boost::asio::any_io_executor disk) { disk_ = std::move(disk); }

    /// A ticket as just folded (null: unreadable): whether it owes its shipping, and, with
    /// `clean_up_cancelled`, whether it was cancelled with a worktree that now goes.
    void ticket_changed(const std::string& id, const Ticket* after, bool clean_up_cancelled);

    /// Starts a ship for each ticket that owes one and has none going; `ticket_of` gives the
    /// daemon's current copy of a ticket.
    void start_owed(
        const std::function<std::shared_ptr<const Ticket>(const std::string&)>& ticket_of);

    /// Whether a ship or a clean-up is going on now.
    bool busy() const { return !shipping_.empty(); }

private:
    boost::asio::awaitable<void> ship(std::shared_ptr<const Ticket> ticket);
    void clean_up_cancelled(const Ticket& ticket);
    ShipRequest request_for(const Ticket& ticket) const;
    void spawn(const std::string& id, boost::asio::awaitable<void> work, const char* what);

    boost::asio::io_context& io_;
    boost::asio::any_io_executor disk_;
    std::filesystem::path board_root_;
    ShipConfig config_;
    Reporter& reporter_;
    Record record_;
    std::function<void()> wake_;
    std::set<std::string> owed_;                 ///< done tickets that owe their shipping
    std::set<std::string> shipping_;             ///< tickets being shipped (or cleaned) now
    std::map<std::string, std::int64_t> tried_;  ///< the seq each ship was last tried at
};

}  // namespace board::orchestrator
