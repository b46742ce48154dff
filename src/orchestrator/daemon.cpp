#include "orchestrator/daemon.hpp"

#include "http/security.hpp"
#include "orchestrator/agent_process.hpp"
#include "orchestrator/disk_work.hpp"
#include "orchestrator/known_tickets.hpp"
#include "orchestrator/notifier.hpp"
#include "orchestrator/planner.hpp"
#include "orchestrator/preflight.hpp"
#include "orchestrator/prompt.hpp"
#include "orchestrator/query_server.hpp"
#include "orchestrator/recovery.hpp"
#include "orchestrator/reporter.hpp"
#include "orchestrator/run_executor.hpp"
#include "orchestrator/run_folder.hpp"
#include "orchestrator/run_outcome.hpp"
#include "orchestrator/shipping.hpp"
#include "orchestrator/startup.hpp"
#include "orchestrator/watcher.hpp"
#include "support/files.hpp"

#include <board/agent_dialect.hpp>
#include <board/agent_output.hpp>
#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/event_log.hpp>
#include <board/next_action.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace board::orchestrator {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

class Daemon {
public:
    Daemon(const DaemonOptions& options,
           const BoardConfig& config,
           PromptTemplates templates,
           std::vector<AgentCheck> agents,
           std::string sandbox_problem)
        : options_(options)
        , agents_(std::move(agents))
        , sandbox_problem_(std::move(sandbox_problem))
        , sandbox_ok_(sandbox_problem_.empty())
        , repository_git_dir_(git_dir_of(options.board_root))
        , config_(config)
        , templates_(std::move(templates))
        , reporter_(options.output)
        , wake_(io_)
        , poll_timer_(io_)
        , signals_(io_, SIGINT, SIGTERM)
        , tickets_dir_(tickets_dir(options.board_root))
        , notifier_(
              config.notify,
              options.board_root,
              [this](const std::string& problem) { reporter_.problem("board-daemon: " + problem); })
        , watcher_(io_, tickets_dir_, [this] { wake(); })
        , known_(
              tickets_dir_,
              reporter_,
              options.debounce.value_or(config.daemon.debounce),
              [this](const std::string& id, const Ticket* before, const Ticket* after) {
                  ticket_changed(id, before, after);
              },
              [this](const std::string& id) { watcher_.watch(id); })
        , live_(std::make_shared<app::LiveBoard>(options.board_root))
        , queries_(io_,
                   app::query_socket_path(options.board_root),
                   [this](const app::BoardQuery& q) { return answer_now(q); })
        , launcher_(process_launcher())
        , writer_(options.board_root) {
        notifier_.set_policy(config.policy);
        if (options.max_parallel) config_.daemon.max_parallel = *options.max_parallel;
        if (options.poll) config_.daemon.poll = *options.poll;
        if (options.debounce) config_.daemon.debounce = *options.debounce;
        run_context_.board_root = options_.board_root;
        run_context_.config = &config_;
        run_context_.templates = &templates_;
        run_context_.repository_git_dir = repository_git_dir_;
        run_context_.sandbox_ok = sandbox_ok_;
        if (sandbox_ok_) run_context_.confinement = shared_confinement(options_.board_root);
        run_context_.executor = io_.get_executor();
        run_context_.disk = disk_.get_executor();
    }

    int run() {
        if (const int code = lock_board(); code != 0) return code;
        if (const int code = start_http(); code != 0) return code;
        if (auto why = queries_.start())
            reporter_.message("board queries are answered from the logs, not by the daemon: " +
                              *why);
        asio::co_spawn(io_, main_loop(), [this](std::exception_ptr e) {
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                reporter_.problem(fmt::format("board-daemon: internal error: {}", ex.what()));
                exit_code_ = 3;
            }
            io_.stop();
        });
        wait_for_signals();
        io_.run();
        // A notification sent just before the end still reaches its person: wait for the
        // commands in flight (reap() kills those past notify.timeout, so this ends).
        while (notifier_.in_flight() > 0) {
            notifier_.reap();
            if (notifier_.in_flight() > 0) std::this_thread::sleep_for(milliseconds{10});
        }
        reporter_.summary(snapshot());
        if (results_lost_ > 0)
            reporter_.problem(fmt::format(
                "board-daemon: the end of {} run(s) could not be recorded (see above): the "
                "logs do not hold everything that happened; exiting 3",
                results_lost_));
        return exit_code_;
    }

private:
    struct Running {
        std::shared_ptr<AgentRun> agent;
        Status phase = Status::research;
        std::string run_id;
        Clock::time_point started;
        Status from = Status::backlog;  ///< the ticket's column before the run
        bool on_log = false;            ///< its `run-started` is durable
    };

    int lock_board() {
        auto held = lock_daemon(options_.board_root);
        if (!held) {
            reporter_.problem(held.error().message);
            return held.error().exit_code;
        }
        lock_ = std::move(held).value();
        return 0;
    }

    int start_http() {
        if (!options_.http) return 0;
        http::HttpOptions options;
        options.board = options_.board_root;
        options.live_board = live_;
        options.address = *options_.http;
        http_ = std::make_unique<http::HttpServer>(io_, options);
        if (const std::string error = http_->start(); !error.empty()) {
            reporter_.problem("board-daemon: --http: " + error);
            http_.reset();
            return 3;
        }
        announce_page(*http_, options_.http->host, reporter_);
        // Notifications link their ticket on the page (never with the token in it), at the
        // host the printed link names.
        const auto at = http_->local_endpoint();
        notifier_.set_page(fmt::format("http://{}:{}/", http::page_host(at.address()), at.port()));
        return 0;
    }

    // ---- signals ----------------------------------------------------------------------

    void wait_for_signals() {
        signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
            if (ec) return;
            if (!stopping_) {
                stopping_ = true;
                reporter_.message(fmt::format(
                    "{} received: no new runs; {} running agent(s) get {} to finish (signal again "
                    "to stop them now)",
                    signo == SIGINT ? "SIGINT" : "SIGTERM",
                    running_.size(),
                    format_duration(config_.daemon.grace)));
                for (auto& [id, r] : running_) r.agent->interrupt(config_.daemon.grace);
            } else {
                reporter_.message("second signal: stopping every agent now");
                for (auto& [id, r] : running_) r.agent->kill_now();
            }
            wake();
            wait_for_signals();
        });
    }

    void wake() {
        wake_pending_ = true;
        wake_.cancel();
    }

    // ---- reading the board --------------------------------------------------------------

    /// Every change of what the daemon knows of a ticket, by its own write or another's.
    void ticket_changed(const std::string& id, const Ticket* before, const Ticket* after) {
        answered_.clear();
        // Tell a person what now waits for them. The first look at a ticket (start-up, a new
        // folder) is not news.
        if (before && after) notifier_.notify_changes(*before, *after);
        // The page's live events: every change after the first look (the server noted the
        // end of every log when it started; a ticket created since is news).
        if (http_ && looked_once_ && after) http_->ticket_changed(id);
        // The board every reader shares (the planner, the page): this ticket as just folded.
        if (after)
            live_->ticket_is(*after);
        else
            live_->ticket_changed(id);
        // A cancelled ticket's worktree (found at start too, when it was cancelled meanwhile).
        if (options_.run_agents && after && after->status == Status::done &&
            after->resolution == Resolution::wont_do && !after->branch.empty())
            clean_up_cancelled(*after);
        // Likewise the tickets that owe their shipping.
        if (after && after->status == Status::done && after->ship_owed) {
            owed_ships_.insert(id);
        } else {
            owed_ships_.erase(id);
            ship_tried_.erase(id);
        }
        // Kept per board, so question timeouts never need a pass over every ticket.
        if (after && next_question_deadline(*after))
            timed_questions_.insert(id);
        else
            timed_questions_.erase(id);
        if (after && next_handoff_deadline(*after, config_.policy))
            timed_handoffs_.insert(id);
        else
            timed_handoffs_.erase(id);
    }

    void refresh_dirty() {
        for (const auto& id : watcher_.take_changed()) known_.reload(id, true);
    }

    /// A board-wide query from the `board` command: answered from the kept board once every
    /// change finished before it is read (pending notifications drained), never before.
    /// The same question asked again before anything changed gets the answer it got (a big
    /// board's JSON is most of an answer's cost); any change forgets every answer.
    app::QueryAnswer answer_now(const app::BoardQuery& query) {
        if (watcher_.available()) {
            watcher_.drain();
            refresh_dirty();
        } else {
            known_.scan();
        }
        const std::string key = app::encode_query(query);
        if (const auto it = answered_.find(key); it != answered_.end()) return it->second;
        auto answer = app::answer_query(*live_, query);
        if (answered_.size() >= 64) answered_.clear();
        answered_.emplace(key, answer);
        return answer;
    }

    // ---- writing ------------------------------------------------------------------------

    /// Appends what `build` makes of the ticket as it is on disk (app::Board::record); the
    /// ticket after it, or nothing when it was not written (a refusal is reported, a ticket
    /// that moved on is planned again). A run's start leaves `ticket.json` to its end.
    std::optional<std::shared_ptr<const Ticket>> commit(
        const std::string& id,
        const app::Author& build,
        std::optional<std::int64_t> expected_seq = {},
        bool refresh_snapshot = true,
        bool run_result = false) {
        return committed(id, writer_.record(id, build, expected_seq, refresh_snapshot), run_result);
    }

    /// commit() with the write on the disk threads; `build` must use only what it is given.
    asio::awaitable<std::optional<std::shared_ptr<const Ticket>>> commit_on_disk(
        std::string id,
        app::Author build,
        std::optional<std::int64_t> expected_seq = {},
        bool refresh_snapshot = true,
        bool run_result = false) {
        // While the write is on its way, a change the watcher sees in this log is the
        // daemon's own, not a person's (no debounce for it).
        ++known_.entry(id).own_writes_in_flight;
        auto recorded = co_await on_disk(disk_.get_executor(), [&] {
            return writer_.record(id, build, expected_seq, refresh_snapshot);
        });
        --known_.entry(id).own_writes_in_flight;
        co_return committed(id, std::move(recorded), run_result);
    }

    /// What the daemon learns from one of its writes, on the io thread. `run_result`: the
    /// write was the last try to record how a run ended.
    std::optional<std::shared_ptr<const Ticket>> committed(const std::string& id,
                                                           app::Result<app::Recorded> recorded,
                                                           bool run_result = false) {
        if (!recorded) {
            if (run_result && recorded.error().kind == app::Refusal::Kind::storage) {
                // A run happened and its end is not on the log: the daemon must not end as
                // if it were.
                ++results_lost_;
                exit_code_ = 3;
            }
            if (recorded.error().kind != app::Refusal::Kind::conflict)
                reporter_.problem("board-daemon: " + recorded.error().message);
            return std::nullopt;
        }
        auto& entry = known_.entry(id);
        known_.set(id, recorded.value().ticket);
        entry.own_seq = recorded.value().ticket->seq;
        // Not stamped: another writer may have appended right after, so the next look at
        // this ticket reads it again.
        entry.stamp = KnownTickets::LogStamp{};
        for (const auto& w : recorded.value().warnings) reporter_.problem("board-daemon: " + w);
        for (const auto& e : recorded.value().events) reporter_.event(id, e);
        return recorded.value().ticket;
    }

    // ---- deciding -----------------------------------------------------------------------

    /// Appends a timeout for every question whose time has come; returns the next deadline.
    std::optional<UnixMillis> time_out_questions() {
        std::optional<UnixMillis> next;
        const UnixMillis now = wall_clock_now();
        // A copy: committing a timeout changes the set.
        const std::vector<std::string> timed(timed_questions_.begin(), timed_questions_.end());
        for (const std::string& id : timed) {
            auto& entry = known_.all().at(id);
            if (!entry.ticket) continue;
            if (!questions_due(*entry.ticket, now).empty()) {
                commit(id, [now](const Ticket& t) {
                    std::vector<Authored> batch;
                    for (auto& q : questions_due(t, now))
                        batch.push_back({Actor{ActorKind::system, {}}, QuestionTimedOut{q}});
                    return batch;
                });
            }
            if (auto deadline = next_question_deadline(*entry.ticket)) {
                next = next ? std::min(*next, *deadline) : *deadline;
            }
        }
        return next;
    }

    /// Records the reminders and escalations board.yaml's `handoffs` owe people (the notify
    /// command hears of each as the change is folded); returns the next one's time.
    std::optional<UnixMillis> mind_handoffs() {
        std::optional<UnixMillis> next;
        const UnixMillis now = wall_clock_now();
        const std::vector<std::string> timed(timed_handoffs_.begin(), timed_handoffs_.end());
        for (const std::string& id : timed) {
            auto& entry = known_.all().at(id);
            if (!entry.ticket) continue;
            if (!handoff_events_due(*entry.ticket, config_.policy, now).empty()) {
                commit(id, [this, now](const Ticket& t) {
                    std::vector<Authored> batch;
                    for (auto& payload : handoff_events_due(t, config_.policy, now))
                        batch.push_back({Actor{ActorKind::system, {}}, std::move(payload)});
                    return batch;
                });
            }
            if (auto deadline = next_handoff_deadline(*entry.ticket, config_.policy))
                next = next ? std::min(*next, *deadline) : *deadline;
        }
        return next;
    }

    /// Launches what the planner says may run now; returns when it must look again at the
    /// latest (a retry backoff or a debounce ends).
    std::optional<Clock::time_point> launch_runnable() {
        // Held only while planning: a board no one holds takes the next change in place.
        const auto board = live_->current();
        if (!board) {
            reporter_.problem("board-daemon: " + board.error().message);
            return std::nullopt;
        }
        PlanInput input;
        input.catalog = &board.value()->catalog;
        input.policy = config_.policy;
        input.scope.epic = options_.epic;
        input.hold = [this](const std::string& id) {
            TicketHold hold;
            const auto it = known_.all().find(id);
            if (it == known_.all().end()) return hold;
            hold.ticket = it->second.ticket.get();
            hold.running = running_.count(id) > 0;
            hold.ran_this_session = it->second.ran_this_session;
            hold.available_at = it->second.available_at;
            return hold;
        };
        input.running = static_cast<int>(running_.size());
        for (const auto& [running_id, run] : running_)
            if (!run.on_log) input.starting.push_back(StartingRun{run.from, run.phase});
        input.max_parallel = config_.daemon.max_parallel;
        input.stopping = stopping_;
        input.once = options_.mode == DaemonOptions::Mode::once;
        input.now = Clock::now();
        input.wall = wall_clock_now();
        const Plan plan = plan_runs(input);
        for (const auto& launch : plan.launches) begin_run(launch.id, launch.start);
        return plan.wake_at;
    }

    // ---- running ------------------------------------------------------------------------

    /// Takes a slot for `id` now (the planner counts it from here), then runs it: its
    /// `run-started` on the log, the agent, the outcome on the log; the slot is given back
    /// when the outcome is durable.
    void begin_run(const std::string& id, const StartRun& start) {
        const auto before = known_.all().at(id).ticket;
        const std::string run_id = fmt::format("{:04}", before->runs_total + 1);
        Running running{launcher_->prepare(io_.get_executor()),
                        start.phase,
                        run_id,
                        Clock::now(),
                        before->status};
        running_.emplace(id, running);
        asio::co_spawn(
            io_,
            run_ticket(id, start, run_id, before->seq, running.agent),
            [this, id](std::exception_ptr e) {
                if (e) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        reporter_.problem(fmt::format(
                            "board-daemon: {}: run failed inside the daemon: {}", id, ex.what()));
                    }
                }
                running_.erase(id);
                reporter_.stopped(id);
                wake();
            });
    }

    asio::awaitable<void> run_ticket(std::string id,
                                     StartRun start,
                                     std::string run_id,
                                     std::int64_t seq_before,
                                     std::shared_ptr<AgentRun> agent) {
        // Every argument of a co_await'ed call is a named variable: GCC 12 destroys a
        // temporary made in the co_await's full expression twice (toolchain.md §3, snag 11).
        const std::string branch = run_branch(id, start.phase);
        app::Author run_started = [=](const Ticket&) {
            return std::vector<Authored>{
                {Actor{ActorKind::system, {}},
                 RunStarted{
                     run_id, start.phase, start.attempt, start.iteration, start.policy, branch}}};
        };
        const auto started = co_await commit_on_disk(id, std::move(run_started), seq_before, false);
        if (!started) {
            watcher_.mark(id);  // it changed under us: look again
            co_return;
        }
        known_.all().at(id).ran_this_session = true;
        running_.at(id).on_log = true;
        reporter_.running(id, start.phase, run_id, agent);
        StartedRun run{std::move(agent), start.phase, run_id};
        auto record = co_await execute_run(run_context_, id, **started, std::move(run));
        if (!record) {
            app::Author interrupted = [=](const Ticket&) {
                return std::vector<Authored>{
                    {Actor{ActorKind::system, {}}, RunInterrupted{run_id, "board-daemon stopped"}}};
            };
            co_await commit_on_disk(id, std::move(interrupted), {}, true, true);
            co_return;
        }
        const auto outcome = std::make_shared<const RunRecord>(std::move(*record));
        app::Author whole = finishing(outcome, true);
        if (co_await commit_on_disk(id, std::move(whole))) co_return;
        app::Author last_only = finishing(outcome, false);
        co_await commit_on_disk(id, std::move(last_only), {}, true, true);
    }

    void commit_outcome(const std::string& id, const RunRecord& record) {
        const auto outcome = std::make_shared<const RunRecord>(record);
        if (!commit(id, finishing(outcome, true)))
            commit(id, finishing(outcome, false), {}, true, true);
    }

    // ---- recovery -----------------------------------------------------------------------

    /// Runs left in flight by a daemon that died: the agent is stopped if it still runs, then
    /// the run is finished from its saved output when that ends with a signal, else recorded
    /// as interrupted (and the phase runs again).
    void recover() {
        std::optional<std::vector<AgentProcessFound>> found;
        for (auto& [id, entry] : known_.all()) {
            if (!entry.ticket || !entry.ticket->run) continue;
            const Run run = *entry.ticket->run;
            if (!found) found = processes_with_a_board_run();  // once, and only if needed
            auto record =
                resolve_leftover_run(run_context_, id, run, *found, [this](const std::string& m) {
                    reporter_.message(m);
                });
            if (record) {
                commit_outcome(id, *record);
                continue;
            }
            commit(id, [&](const Ticket&) {
                return std::vector<Authored>{
                    {Actor{ActorKind::system, {}},
                     RunInterrupted{run.id,
                                    "the daemon stopped while it was in flight (found at "
                                    "restart); the phase runs again"}}};
            });
        }
    }

    // ---- the loop -----------------------------------------------------------------------

    /// Keeps the live view's elapsed times moving.
    asio::awaitable<void> tick_live_view() {
        while (!finished_) {
            poll_timer_.expires_after(std::chrono::seconds{1});
            co_await poll_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
            reporter_.tick();
        }
    }

    /// The branch a run of `phase` works on: implementing in a worktree, and the review of
    /// work done there, are on `board/<ID>`.
    std::string run_branch(const std::string& id, Status phase) const {
        const bool in_worktree =
            (phase == Status::implementing && config_.implementing.worktree) ||
            (phase == Status::review && !known_.all().at(id).ticket->branch.empty());
        return in_worktree ? ticket_branch(id) : std::string{};
    }

    // ---- shipping ------------------------------------------------------------------------

    /// Ships every done ticket that owes it (shipping.hpp), one at a time per ticket.
    void start_owed_ships() {
        for (const auto& id : owed_ships_) {
            if (shipping_.count(id) != 0) continue;
            // Tried at this very state and not recorded (the reducer or the disk said no):
            // again only once the ticket changes, not in a loop.
            const auto& known = known_.all().at(id).ticket;
            if (const auto tried = ship_tried_.find(id);
                tried != ship_tried_.end() && known && tried->second == known->seq)
                continue;
            if (known) ship_tried_[id] = known->seq;
            shipping_.insert(id);
            asio::co_spawn(io_, ship_ticket(id), [this, id](std::exception_ptr e) {
                if (e) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        reporter_.problem(
                            fmt::format("board-daemon: {}: shipping failed inside the daemon: {}",
                                        id,
                                        ex.what()));
                    }
                }
                shipping_.erase(id);
                wake();
            });
        }
    }

    asio::awaitable<void> ship_ticket(std::string id) {
        const auto ticket = known_.all().at(id).ticket;
        ShipRequest request;
        request.id = id;
        request.title = ticket->title;
        request.body = ticket->description;
        if (const auto& review = ticket->artifact(ArtifactKind::review);
            review && !review->summary.empty())
            request.body += (request.body.empty() ? "" : "\n\n") + review->summary;
        request.branch = ticket->branch;
        request.board_root = options_.board_root;
        request.log_file = options_.board_root / "tickets" / id / "runs" / "ship.log";
        request.config = config_.ship;
        const auto outcome = co_await ship_branch(io_.get_executor(), request);
        const std::int64_t seq = ticket->seq;
        app::Author record = [outcome](const Ticket&) {
            return std::visit(
                [](const auto& event) {
                    return std::vector<Authored>{{Actor{ActorKind::system, {}}, Payload{event}}};
                },
                outcome);
        };
        // Against the ticket as it was: a person who reopened it meanwhile wins.
        const auto recorded = co_await commit_on_disk(id, std::move(record), seq);
        if (!recorded || !std::holds_alternative<Shipped>(outcome)) co_return;
        const bool merged = std::get<Shipped>(outcome).how == ShipMethod::merge;
        const auto problems = co_await clean_up_worktree(io_.get_executor(), request, merged);
        for (const auto& problem : problems) reporter_.message(fmt::format("{}: {}", id, problem));
    }

    /// A cancelled ticket: its worktree goes, its branch (the work) stays.
    void clean_up_cancelled(const Ticket& ticket) {
        if (!config_.ship.cleanup || shipping_.count(ticket.id) != 0) return;
        std::error_code ec;
        if (!fs::exists(worktree_dir(options_.board_root, ticket.id), ec)) return;
        ShipRequest request;
        request.id = ticket.id;
        request.branch = ticket.branch;
        request.board_root = options_.board_root;
        request.log_file = options_.board_root / "tickets" / ticket.id / "runs" / "ship.log";
        request.config = config_.ship;
        shipping_.insert(ticket.id);
        asio::co_spawn(
            io_,
            clean_up_worktree(io_.get_executor(), request, false),
            [this, id = ticket.id](std::exception_ptr e, std::vector<std::string> problems) {
                if (e) problems.emplace_back("the worktree was not removed");
                for (const auto& problem : problems)
                    reporter_.message(fmt::format("{}: {}", id, problem));
                shipping_.erase(id);
                wake();
            });
    }

    asio::awaitable<void> main_loop() {
        if (reporter_.live()) asio::co_spawn(io_, tick_live_view(), asio::detached);
        if (auto why = watcher_.start())
            reporter_.message(fmt::format("inotify unavailable ({}); polling every {}",
                                          *why,
                                          format_duration(config_.daemon.poll)));
        known_.scan();
        looked_once_ = true;
        if (options_.run_agents) recover();
        const auto started = Clock::now();
        auto last_full_scan = Clock::now();
        const bool watching = options_.mode == DaemonOptions::Mode::watch;
        reporter_.message(fmt::format("board-daemon on {}: {} ticket(s){}{}",
                                      options_.board_root.string(),
                                      known_.all().size(),
                                      options_.run_agents ? fmt::format(", max {} agent(s) at once",
                                                                        config_.daemon.max_parallel)
                                                          : std::string{},
                                      watching ? ", watching for changes" : ""));
        if (options_.run_agents)
            announce_agents(
                agents_, sandbox_ok_ ? std::string{} : sandbox_problem_, config_, reporter_);
        else
            reporter_.message(
                "agents are not run (--no-agents): the page and the API only; nothing is "
                "started, shipped or timed out");
        if (!config_.notify.command.empty()) {
            // A notify command that is not there would fail on the first news: say so now.
            LaunchSpec notify;
            notify.argv = config_.notify.command;
            notify.cwd = options_.board_root;
            std::string problem;
            if (!find_program(notify, problem))
                reporter_.problem("board-daemon: notify: " + problem +
                                  ": no one will be notified (notify.command in board.yaml)");
        }
        for (;;) {
            if (options_.run_for && Clock::now() - started >= *options_.run_for && !stopping_) {
                stopping_ = true;
                reporter_.message(fmt::format("--timeout {} reached: stopping",
                                              format_duration(*options_.run_for)));
                for (auto& [id, r] : running_) r.agent->interrupt(config_.daemon.grace);
            }
            notifier_.reap();
            const bool poll_due = Clock::now() - last_full_scan >= config_.daemon.poll;
            if (!watcher_.available() || poll_due) {
                known_.scan();
                last_full_scan = Clock::now();
            } else {
                refresh_dirty();
            }
            std::optional<Clock::time_point> wake_at;
            if (!stopping_ && options_.run_agents) {
                auto deadline = time_out_questions();
                if (auto handoff = mind_handoffs())
                    deadline = deadline ? std::min(*deadline, *handoff) : *handoff;
                if (deadline && watching) {
                    wake_at =
                        Clock::now() +
                        milliseconds{std::max<UnixMillis>(0, *deadline - wall_clock_now()) + 5};
                }
                if (auto next = launch_runnable())
                    wake_at = wake_at ? std::min(*wake_at, *next) : *next;
                start_owed_ships();
            }
            if (reporter_.live()) reporter_.board(snapshot());
            if (running_.empty() && shipping_.empty() && !watcher_.has_changed()) {
                if (stopping_) break;
                if (!watching && !wake_at) break;  // nothing can move without a human
            }
            if (watcher_.has_changed()) continue;
            if (watching || !running_.empty() || !shipping_.empty()) {
                const auto poll_at = last_full_scan + config_.daemon.poll;
                wake_at = wake_at ? std::min(*wake_at, poll_at) : poll_at;
            }
            if (options_.run_for) {
                const auto end = started + *options_.run_for;
                if (!stopping_) wake_at = wake_at ? std::min(*wake_at, end) : end;
            }
            if (!wake_pending_) {
                wake_.expires_at(wake_at ? *wake_at : Clock::now() + std::chrono::hours{24});
                co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            wake_pending_ = false;
        }
        if (notifier_.failed() > 0 || notifier_.dropped() > 0)
            reporter_.problem(fmt::format(
                "board-daemon: notify: {} command(s) started, {} failed, {} notification(s) "
                "dropped; the last problem: {}",
                notifier_.started(),
                notifier_.failed(),
                notifier_.dropped(),
                notifier_.last_error()));
        finished_ = true;
        if (http_) http_->stop();
        watcher_.stop();
        queries_.stop();
        signals_.cancel();
        poll_timer_.cancel();
    }

    BoardSnapshot snapshot() {
        BoardSnapshot s;
        for (const auto& [id, entry] : known_.all()) {
            if (entry.ticket) s.tickets.push_back(entry.ticket);
        }
        // What holds a ticket the agent would otherwise take: the same words `board show`
        // and the page give.
        if (const auto board = live_->current()) {
            const Catalog& catalog = board.value()->catalog;
            const app::Standings standings(catalog, config_.policy, wall_clock_now());
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

    DaemonOptions options_;
    std::vector<AgentCheck> agents_;  ///< what the pre-flight found, for the first message
    std::string sandbox_problem_;     ///< why agents cannot be confined; empty: they are
    bool sandbox_ok_ = false;
    fs::path repository_git_dir_;  ///< the `.git` folder of the board's repository, if any
    BoardConfig config_;
    PromptTemplates templates_;
    Reporter reporter_;
    asio::io_context io_;
    asio::steady_timer wake_;
    asio::steady_timer poll_timer_;
    asio::signal_set signals_;
    fs::path tickets_dir_;
    Notifier notifier_;
    BoardWatcher watcher_;
    KnownTickets known_;
    /// The board as every reader sees it, kept current by this daemon's writes and watch;
    /// shared with the HTTP server.
    std::shared_ptr<app::LiveBoard> live_;
    std::unique_ptr<http::HttpServer> http_;
    QueryServer queries_;
    std::unordered_map<std::string, app::QueryAnswer> answered_;  ///< see answer_now()
    std::unique_ptr<AgentLauncher> launcher_;
    /// The daemon's own writes, made on the disk threads: a board that keeps nothing, so it is
    /// safe there; each write's result reaches `live_` on the io thread (committed()).
    app::Board writer_;
    RunContext run_context_;
    bool looked_once_ = false;               ///< the first scan of the board is done
    std::set<std::string> timed_questions_;  ///< tickets with a question that can time out
    std::set<std::string> timed_handoffs_;   ///< tickets a handoff service level may remind
    std::map<std::string, Running, KnownTickets::IdOrder> running_;
    std::set<std::string> owed_ships_;                ///< done tickets that owe their shipping
    std::set<std::string> shipping_;                  ///< tickets being shipped now
    std::map<std::string, std::int64_t> ship_tried_;  ///< the seq each ship was last tried at
    UniqueFd lock_;  ///< tickets/.daemon.lock, held while the daemon runs
    bool wake_pending_ = false;
    bool stopping_ = false;
    bool finished_ = false;
    int exit_code_ = 0;
    int results_lost_ = 0;  ///< runs whose end the disk refused to record, each reported
    /// Last: its threads stop (finishing the work they hold) before anything they use goes.
    asio::thread_pool disk_{2};
};

}  // namespace

int run_daemon(const DaemonOptions& options, const BoardConfig& config) {
    // Without agents there is nothing to check: a board whose agents are not installed here
    // can still be served.
    ReadyToStart ready;
    if (options.run_agents) {
        auto checked = check_before_start(options.board_root, config);
        if (!checked) {
            std::cerr << checked.error().message << '\n';
            return checked.error().exit_code;
        }
        ready = std::move(checked).value();
    }
    auto& [templates, agents, sandbox_problem] = ready;
    Daemon daemon(
        options, config, std::move(templates), std::move(agents), std::move(sandbox_problem));
    return daemon.run();
}

}  // namespace board::orchestrator
