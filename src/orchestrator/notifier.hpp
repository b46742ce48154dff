#pragma once
// Notifications: board.yaml's `notify.command`, run whenever a ticket starts awaiting a person
// or an agent asks a question, so a person hears about it without watching the board.
//
// The command is an argv list started with posix_spawnp (never a shell), in its own process
// group, with stdout and stderr to /dev/null and the board as its working folder. The details
// arrive twice: in the environment (BOARD_TICKET, BOARD_REASON, BOARD_AWAITING, ...) for
// one-line scripts, and as one JSON object on standard input for everything else.
//
// Never blocks the daemon: spawning is the only system call on the caller's path, at most
// `max_parallel` commands run at once (a notification beyond that is dropped and counted),
// and reap() collects finished ones and kills (SIGKILL, whole group) those past the timeout.
// Not thread-safe; one per daemon, on its io_context thread.

#include <board/board_config.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace board::orchestrator {

/// One thing a person should hear about.
struct Notification {
    /// awaiting: a ticket starts awaiting a person; question: an agent asks one; reminder:
    /// a request kept past `handoffs.<kind>.remind_after`; escalation: past `escalate_after`.
    enum class Reason { awaiting, question, reminder, escalation };
    Reason reason = Reason::awaiting;
    std::string ticket;
    std::string title;
    std::string status;
    std::string awaiting;  ///< the awaiting type after the change (may be empty for a question)
    std::string handoff;
    std::string question_id;    ///< `PROJ-12.q1`, for a question
    std::string question;       ///< its text
    std::string response_type;  ///< text, choice, boolean, approval
    /// A choice's options, `id` and `label` (the id again when it has none).
    std::vector<std::pair<std::string, std::string>> options;
    /// What the ticket asks: its asker's words (a signal's context, an escalation's reason),
    /// clipped; and who asked.
    std::string request;
    std::string asked_by;
    std::string url;  ///< the ticket on the board's page, when the daemon serves one
    /// Who it is for: board.yaml's `reviewers` of its kind, and whom it was escalated to
    /// (empty: anyone). `reminder` counts the reminders of this request (0 for the first news).
    std::vector<std::string> people;
    int reminder = 0;

    /// `BOARD_REASON=awaiting|question|reminder|escalation`, `BOARD_FOR` (names, comma-separated),
    /// `BOARD_TICKET`, `BOARD_TITLE`, `BOARD_STATUS`,
    /// `BOARD_AWAITING`, `BOARD_HANDOFF`, `BOARD_REQUEST`, `BOARD_ASKED_BY`, `BOARD_URL`
    /// (empty without a page), and for a question `BOARD_QUESTION_ID`, `BOARD_QUESTION`,
    /// `BOARD_RESPONSE_TYPE`, `BOARD_OPTIONS` (`id=label` lines): `NAME=value` strings.
    std::vector<std::string> environment() const;
    /// The same as one JSON object (one line, with a trailing newline).
    std::string json() const;
};

std::string_view to_string(Notification::Reason);

/// What changed between two states of one ticket that a person should hear about: a new
/// awaiting (none before, or another type), each newly asked pending question, a reminder
/// and an escalation recorded. A ticket that awaits input because of a question is announced
/// once, as the question. `policy` names who each kind is for. Pure.
std::vector<Notification> notifications_for(const Ticket& before,
                                            const Ticket& after,
                                            const Policy& policy = {});

class Notifier {
public:
    /// `board` becomes the command's working folder and `BOARD_DIR`. `report` hears each
    /// kind of failure once (the command missing, an exit status, a timeout, dropped
    /// notifications), in a line for the daemon's output; later ones are only counted.
    Notifier(NotifyConfig config,
             std::filesystem::path board,
             std::function<void(const std::string&)> report = {});
    /// Kills what still runs (the whole group) and reaps it.
    ~Notifier();
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    /// Runs the command for each notification of notifications_for(before, after). Does
    /// nothing without a configured command. Reaps first, so calling it is enough to keep the
    /// number in flight bounded.
    void notify_changes(const Ticket& before, const Ticket& after);
    /// Runs the command for one notification (or drops it when `max_parallel` are running).
    void notify(const Notification& notification);
    /// Collects finished commands; kills those running longer than the timeout at `now`.
    /// Cheap: call it from the daemon's poll tick too, so a timed-out command dies without new
    /// news.
    void reap(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

    std::size_t in_flight() const { return running_.size(); }

    /// The process ids of the commands in flight (each its process group's id).
    std::vector<int> in_flight_pids() const;

    std::size_t started() const { return started_; }

    std::size_t dropped() const { return dropped_; }

    std::size_t failed() const { return failed_; }  ///< could not spawn, non-zero exit, killed

    /// board.yaml's `reviewers` and `handoffs`: who each notification is for.
    void set_policy(Policy policy) { policy_ = std::move(policy); }

    /// The board's page (`http://127.0.0.1:8080/`, no token): notifications link their ticket.
    void set_page(std::string base_url) { page_ = std::move(base_url); }

    /// The last spawn error or failure, for a warning line (empty if none).
    const std::string& last_error() const { return last_error_; }

    /// How many commands failed and notifications were dropped, and the last problem, in one
    /// sentence; nothing when none did.
    std::optional<std::string> trouble() const;

private:
    struct Child {
        pid_t pid = 0;
        std::chrono::steady_clock::time_point started;
        bool killed = false;
    };

    /// Counts a failure and reports it, unless one like it was reported already.
    void fail(std::string message);

    NotifyConfig config_;
    std::filesystem::path board_;
    std::function<void(const std::string&)> report_;
    std::string page_;
    Policy policy_;
    std::set<std::string> reported_;
    std::vector<Child> running_;
    std::size_t started_ = 0;
    std::size_t dropped_ = 0;
    std::size_t failed_ = 0;
    std::string last_error_;
};

}  // namespace board::orchestrator
