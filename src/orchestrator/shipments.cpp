#include "orchestrator/shipments.hpp"

#include "orchestrator/disk_work.hpp"

#include <board/board_dir.hpp>
#include <board/event_log.hpp>

#include <boost/asio/co_spawn.hpp>
#include <fmt/format.h>

#include <variant>

namespace board::orchestrator {

namespace asio = boost::asio;
namespace fs = std::filesystem;

Shipments::Shipments(asio::io_context& io,
                     fs::path board_root,
                     ShipConfig config,
                     Reporter& reporter,
                     Record record,
                     std::function<void()> wake)
    : io_(io)
    , board_root_(std::move(board_root))
    , config_(std::move(config))
    , reporter_(reporter)
    , record_(std::move(record))
    , wake_(std::move(wake)) {}

void Shipments::ticket_changed(const std::string& id,
                               const Ticket* after,
                               bool clean_up_cancelled_ones) {
    // A cancelled ticket's worktree (found at start too, when it was cancelled meanwhile).
    if (clean_up_cancelled_ones && after && after->status == Status::done &&
        after->resolution == Resolution::wont_do && !after->branch.empty())
        clean_up_cancelled(*after);
    if (after && after->status == Status::done && after->ship_owed) {
        owed_.insert(id);
    } else {
        owed_.erase(id);
        tried_.erase(id);
    }
}

void Shipments::start_owed(
    const std::function<std::shared_ptr<const Ticket>(const std::string&)>& ticket_of) {
    for (const auto& id : owed_) {
        if (shipping_.count(id) != 0) continue;
        const auto ticket = ticket_of(id);
        if (!ticket) continue;
        // Tried at this very state and not recorded (the reducer or the disk said no):
        // again only once the ticket changes, not in a loop.
        if (const auto tried = tried_.find(id);
            tried != tried_.end() && tried->second == ticket->seq)
            continue;
        tried_[id] = ticket->seq;
        spawn(id, ship(ticket), "shipping");
    }
}

ShipRequest Shipments::request_for(const Ticket& ticket) const {
    ShipRequest request;
    request.id = ticket.id;
    request.branch = ticket.branch;
    request.board_root = board_root_;
    request.log_file = board_root_ / "tickets" / ticket.id / "runs" / "ship.log";
    request.config = config_;
    return request;
}

void Shipments::spawn(const std::string& id, asio::awaitable<void> work, const char* what) {
    shipping_.insert(id);
    asio::co_spawn(io_, std::move(work), [this, id, what](std::exception_ptr e) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                reporter_.problem(fmt::format(
                    "board-daemon: {}: {} failed inside the daemon: {}", id, what, ex.what()));
            }
        }
        shipping_.erase(id);
        wake_();
    });
}

asio::awaitable<void> Shipments::ship(std::shared_ptr<const Ticket> ticket) {
    ShipRequest request = request_for(*ticket);
    request.title = ticket->title;
    // What the daemon keeps of a ticket leaves out its description and artifacts: the body
    // of a pull request comes from the ticket as its log says, read on a disk thread.
    const auto read_log = [dir = board_root_ / "tickets" / ticket->id] { return load_ticket(dir); };
    auto loaded = co_await on_disk(disk_, read_log);
    if (const auto* whole = std::get_if<Loaded>(&loaded)) {
        request.body = whole->ticket.description;
        if (const auto& review = whole->ticket.artifact(ArtifactKind::review);
            review && !review->summary.empty())
            request.body += (request.body.empty() ? "" : "\n\n") + review->summary;
    } else {
        reporter_.problem(fmt::format("board-daemon: {}: its pull request goes without a body: {}",
                                      ticket->id,
                                      std::get<LogError>(loaded).message));
    }
    const auto outcome = co_await ship_branch(io_.get_executor(), request);
    app::Author record = [outcome](const Ticket&) {
        return std::visit(
            [](const auto& event) {
                return std::vector<Authored>{{Actor{ActorKind::system, {}}, Payload{event}}};
            },
            outcome);
    };
    // Against the ticket as it was: a person who reopened it meanwhile wins.
    const std::string id = ticket->id;
    const bool recorded = co_await record_(id, std::move(record), ticket->seq);
    if (!recorded || !std::holds_alternative<Shipped>(outcome)) co_return;
    const bool merged = std::get<Shipped>(outcome).how == ShipMethod::merge;
    if (std::get<Shipped>(outcome).how == ShipMethod::pr) {
        // On the log now: a later ship of this ticket opens its own.
        std::error_code ec;
        fs::remove(opened_pull_request_file(board_root_, id), ec);
    }
    const auto problems = co_await clean_up_worktree(io_.get_executor(), request, merged);
    for (const auto& problem : problems) reporter_.message(fmt::format("{}: {}", id, problem));
}

void Shipments::clean_up_cancelled(const Ticket& ticket) {
    if (!config_.cleanup || shipping_.count(ticket.id) != 0) return;
    std::error_code ec;
    if (!fs::exists(worktree_dir(board_root_, ticket.id), ec)) return;
    auto clean = [](Shipments& self, ShipRequest request) -> asio::awaitable<void> {
        auto problems = co_await clean_up_worktree(self.io_.get_executor(), request, false);
        for (const auto& problem : problems)
            self.reporter_.message(fmt::format("{}: {}", request.id, problem));
    };
    spawn(ticket.id, clean(*this, request_for(ticket)), "removing the worktree");
}

}  // namespace board::orchestrator
