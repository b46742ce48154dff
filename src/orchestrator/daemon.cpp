#include "orchestrator/daemon.hpp"

#include "orchestrator/answer_cache.hpp"
#include "orchestrator/due_events.hpp"
#include "orchestrator/known_tickets.hpp"
#include "orchestrator/notifier.hpp"
#include "orchestrator/own_writes.hpp"
#include "orchestrator/planner.hpp"
#include "orchestrator/prompt.hpp"
#include "orchestrator/query_server.hpp"
#include "orchestrator/recovery.hpp"
#include "orchestrator/reporter.hpp"
#include "orchestrator/run_executor.hpp"
#include "orchestrator/run_outcome.hpp"
#include "orchestrator/shipments.hpp"
#include "orchestrator/startup.hpp"
#include "orchestrator/watcher.hpp"

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
#include <thread>

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
        , watcher_(
              io_,
              tickets_dir_,
              [this] { wake(); },
              [this](const std::string& problem) { reporter_.problem("board-daemon: " + problem); })
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
        , answered_(options.board_root / "board.yaml")
        , writes_(options.board_root, known_, reporter_, options.poll.value_or(config.daemon.poll))
        , due_(known_, writes_, config_.policy)
        , shipments_(
              io_,
              options.board_root,
              config.ship,
              reporter_,
              [this](std::string id, app::Author build, std::int64_t seq) -> asio::awaitable<bool> {
                  const auto recorded = co_await writes_.commit_on_disk(id, std::move(build), seq);
                  co_return recorded.has_value();
              },
              [this] { wake(); }) {
        notifier_.set_policy(config.policy);
        if (options.max_parallel) config_.daemon.max_parallel = *options.max_parallel;
        if (options.poll) config_.daemon.poll = *options.poll;
        if (options.debounce) config_.daemon.debounce = *options.debounce;
        run_context_.board_root = options_.board_root;
        run_context_.config = &config_;
        run_context_.templates = &templates_;
        run_context_.repository_git_dir = repository_git_dir_;
        run_context_.sandbox_ok = sandbox_ok_;
        if (sandbox_ok_) run_context_.confine_runs();
        run_context_.executor = io_.get_executor();
        run_context_.disk = disk_.get_executor();
        if (sandbox_ok_) launching_.emplace();
        launcher_ = process_launcher(launching_ ? launching_->executor() : asio::any_io_executor{});
        writes_.use_disk(disk_.get_executor());
        shipments_.use_disk(disk_.get_executor());
    }

    ~Daemon() { writes_.stop_using_disk(); }

    int run() {
        auto held = lock_daemon(options_.board_root);
        if (!held) {
            reporter_.problem(held.error().message);
            return held.error().exit_code;
        }
        lock_ = std::move(held).value();
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
            // Its agents stop with it, whole groups; the next start records their runs as
            // interrupted.
            for (auto& [id, r] : running_) r.agent->kill_now();
            io_.stop();
        });
        wait_for_signals();
        io_.run();
        // The disk threads' last work (`ticket.json` refreshed after the last writes), and
        // what they had to say about it.
        disk_.join();
        launching_.reset();  // a launch it held ends now; its run never resumes
        writes_.report_snapshot_failures();
        // A notification sent just before the end still reaches its person: wait for the
        // commands in flight (reap() kills those past notify.timeout, so this ends).
        while (notifier_.in_flight() > 0) {
            notifier_.reap();
            if (notifier_.in_flight() > 0) std::this_thread::sleep_for(milliseconds{10});
        }
        reporter_.summary(known_.snapshot(*live_, config_.policy));
        if (writes_.results_lost() > 0) {
            reporter_.problem(fmt::format(
                "board-daemon: the end of {} run(s) could not be recorded (see above): the "
                "logs do not hold everything that happened; exiting 3",
                writes_.results_lost()));
            exit_code_ = 3;
        }
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

    int start_http() {
        if (!options_.http) return 0;
        http_ = start_page(io_, options_.board_root, *options_.http, live_, reporter_, notifier_);
        return http_ ? 0 : 3;
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
        shipments_.ticket_changed(id, after, options_.run_agents);
        due_.ticket_changed(id, after);
    }

    /// Reads again every ticket the watcher named; whether there was any.
    bool refresh_dirty() {
        const bool overflowed = watcher_.take_overflow();
        auto changed = watcher_.take_changed();
        bool any = !changed.empty() || overflowed;
        if (overflowed) {
            // Notifications were dropped: a folder made again may have lost its watch unseen,
            // and any log may have changed.
            for (const auto& [id, entry] : known_.all()) watcher_.watch(id);
            known_.scan();
        }
        for (const auto& id : changed) known_.reload(id, true);
        for (const auto& id : watcher_.unwatched()) {
            const Ticket* before = known_.entry(id).ticket.get();
            known_.reload(id, false);
            any = any || known_.entry(id).ticket.get() != before;
        }
        return any;
    }

    /// A board-wide query from the `board` command: answered from the kept board once every
    /// change finished before it is read (pending notifications drained), never before.
    app::QueryAnswer answer_now(const app::BoardQuery& query) {
        if (watcher_.available()) {
            watcher_.drain();
            // What the drain read may let a ticket start: the loop plans now, not at the poll.
            if (refresh_dirty()) wake();
        } else {
            known_.scan();
        }
        const std::string key = app::encode_query(query);
        if (const auto* kept = answered_.find(key, wall_clock_now())) return *kept;
        auto answer = app::answer_query(*live_, query);
        answered_.keep(key, answer);
        return answer;
    }

    // ---- deciding -----------------------------------------------------------------------

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
            [this, id, run_id](std::exception_ptr e) {
                if (e) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        reporter_.problem(fmt::format(
                            "board-daemon: {}: run failed inside the daemon: {}", id, ex.what()));
                    }
                    end_broken_run(id, run_id);
                }
                running_.erase(id);
                reporter_.stopped(id);
                wake();
            });
    }

    /// A run the daemon failed inside (an exception, mostly memory) is stopped and ended on
    /// its log as interrupted, so that its slot is not given back with the run still open.
    void end_broken_run(const std::string& id, const std::string& run_id) {
        running_.at(id).agent->kill_now();
        const app::Author interrupted = [run_id](const Ticket& t) {
            std::vector<Authored> end;
            if (t.run && t.run->id == run_id)
                end.push_back({Actor{ActorKind::system, {}},
                               RunInterrupted{run_id, "board-daemon failed inside the run"}});
            return end;
        };
        try {
            writes_.commit(id, interrupted, {}, true, true);
        } catch (const std::exception& ex) {
            reporter_.problem(fmt::format(
                "board-daemon: {}: run {} left open on the log: {}", id, run_id, ex.what()));
        }
    }

    asio::awaitable<void> run_ticket(std::string id,
                                     StartRun start,
                                     std::string run_id,
                                     std::int64_t seq_before,
                                     std::shared_ptr<AgentRun> agent) {
        // Every argument of a co_await'ed call is a named variable: GCC 12 destroys a
        // temporary made in the co_await's full expression twice (toolchain.md §3, snag 11).
        const std::string branch =
            works_in_worktree(start.phase, config_, *known_.all().at(id).ticket) ? ticket_branch(id)
                                                                                 : std::string{};
        app::Author run_started = [=](const Ticket&) {
            return std::vector<Authored>{
                {Actor{ActorKind::system, {}},
                 RunStarted{
                     run_id, start.phase, start.attempt, start.iteration, start.policy, branch}}};
        };
        // The run's folder and prompt are made on the same disk thread as its `run-started`,
        // from the ticket that commit wrote.
        PreparedRun prepared;
        OwnWrites::Around prepare;
        prepare.after = [&](const Ticket& written) {
            // The run is on the log now: whatever goes wrong from here ends it as a run that
            // could not start, recorded like any other.
            try {
                prepared = prepare_run(run_context_, id, written, start.phase, run_id);
            } catch (const std::exception& e) {
                prepared.launch_error = std::string{"could not prepare the run: "} + e.what();
            }
        };
        const auto started = co_await writes_.commit_on_disk(
            id, std::move(run_started), seq_before, false, false, prepare);
        if (!started) {
            watcher_.mark(id);  // it changed under us: look again
            co_return;
        }
        known_.all().at(id).ran_this_session = true;
        running_.at(id).on_log = true;
        reporter_.running(id, start.phase, run_id, agent);
        StartedRun run{std::move(agent), start.phase, run_id};
        auto record = co_await run_prepared(run_context_, id, std::move(run), prepared);
        if (!record) {
            // What the agent changed that it must not keep is put back here too: an agent can
            // stop the daemon to end its run early.
            auto restored = std::make_shared<std::vector<std::string>>();
            OwnWrites::Around put_back;
            put_back.before = [&] { *restored = restore_after_run(prepared); };
            app::Author interrupted = [=](const Ticket&) {
                return stopped_batch(run_id, *restored);
            };
            co_await writes_.commit_on_disk(id, std::move(interrupted), {}, true, true, put_back);
            co_return;
        }
        // The agent's work is taken on the disk thread that then records the outcome.
        const auto outcome = std::make_shared<RunRecord>(std::move(*record));
        OwnWrites::Around take;
        take.before = [&] {
            try {
                take_run_work(*outcome, prepared);
            } catch (const std::exception& e) {
                outcome->artifact_error =
                    std::string{"the agent's work was not taken: "} + e.what();
            }
        };
        app::Author whole = finishing(outcome, true);
        if (co_await writes_.commit_on_disk(id, std::move(whole), {}, true, false, take)) co_return;
        app::Author last_only = finishing(outcome, false);
        co_await writes_.commit_on_disk(id, std::move(last_only), {}, true, true);
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

    asio::awaitable<void> main_loop() {
        if (reporter_.live()) asio::co_spawn(io_, tick_live_view(), asio::detached);
        if (auto why = watcher_.start())
            reporter_.message(fmt::format("inotify unavailable ({}); polling every {}",
                                          *why,
                                          format_duration(config_.daemon.poll)));
        known_.scan();
        looked_once_ = true;
        if (options_.run_agents)
            recover_runs(run_context_, known_, writes_, [this](const std::string& m) {
                reporter_.message(m);
            });
        // Only the daemon that holds the board, and after recover_runs stopped a dead daemon's
        // agents (one still going could change them again; with agents off none are looked
        // for): the tools' settings as they were before its last runs are put back before any
        // run starts.
        if (run_context_.settings) {
            for (const auto& line : run_context_.settings->recover(options_.board_root / ".board" /
                                                                   "settings-changed"))
                reporter_.message(line);
        }
        const auto started = Clock::now();
        auto last_full_scan = Clock::now();
        const bool watching = options_.mode == DaemonOptions::Mode::watch;
        announce_start(options_,
                       known_.all().size(),
                       agents_,
                       sandbox_ok_ ? std::string{} : sandbox_problem_,
                       config_,
                       reporter_);
        for (;;) {
            if (options_.run_for && Clock::now() - started >= *options_.run_for && !stopping_) {
                stopping_ = true;
                reporter_.message(fmt::format("--timeout {} reached: stopping",
                                              format_duration(*options_.run_for)));
                for (auto& [id, r] : running_) r.agent->interrupt(config_.daemon.grace);
            }
            notifier_.reap();
            writes_.report_snapshot_failures();
            const bool poll_due = Clock::now() - last_full_scan >= config_.daemon.poll;
            if (!watcher_.available() || poll_due) {
                // A folder inotify could not watch may be watched now (a limit raised).
                for (const auto& id : std::vector<std::string>(watcher_.unwatched().begin(),
                                                               watcher_.unwatched().end()))
                    watcher_.watch(id);
                known_.scan();
                last_full_scan = Clock::now();
            } else {
                refresh_dirty();
            }
            std::optional<Clock::time_point> wake_at;
            if (!stopping_ && options_.run_agents) {
                const auto deadline = due_.commit_due();
                if (deadline && watching) {
                    wake_at =
                        Clock::now() +
                        milliseconds{std::max<UnixMillis>(0, *deadline - wall_clock_now()) + 5};
                }
                if (auto next = launch_runnable())
                    wake_at = wake_at ? std::min(*wake_at, *next) : *next;
                shipments_.start_owed(
                    [this](const std::string& id) { return known_.all().at(id).ticket; });
            }
            if (running_.empty() && run_context_.settings) run_context_.settings->settle();
            if (reporter_.live()) reporter_.board(known_.snapshot(*live_, config_.policy));
            if (running_.empty() && !shipments_.busy() && !watcher_.has_changed()) {
                if (stopping_) break;
                if (!watching && !wake_at) break;  // nothing can move without a human
            }
            if (watcher_.has_changed()) continue;
            if (watching || !running_.empty() || shipments_.busy()) {
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
        if (auto trouble = notifier_.trouble())
            reporter_.problem("board-daemon: notify: " + *trouble);
        finished_ = true;
        if (http_) http_->stop();
        watcher_.stop();
        queries_.stop();
        signals_.cancel();
        poll_timer_.cancel();
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
    AnswerCache answered_;  ///< see answer_now()
    std::unique_ptr<AgentLauncher> launcher_;
    /// The daemon's own writes; each one's result reaches `live_` on the io thread.
    OwnWrites writes_;
    RunContext run_context_;
    bool looked_once_ = false;  ///< the first scan of the board is done
    /// Question timeouts and handoff reminders; the ticket_changed() of `known_` feeds it.
    DueEvents due_;
    std::map<std::string, Running, KnownTickets::IdOrder> running_;
    Shipments shipments_;
    UniqueFd lock_;  ///< tickets/.daemon.lock, held while the daemon runs
    bool wake_pending_ = false;
    bool stopping_ = false;
    bool finished_ = false;
    int exit_code_ = 0;
    /// Last: their threads stop (finishing the work they hold) before anything they use goes.
    asio::thread_pool disk_{2};
    /// Where confined agents are launched (agent_process.hpp); none without Landlock.
    std::optional<LaunchingThread> launching_;
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
