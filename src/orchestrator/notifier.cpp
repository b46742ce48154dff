#include "orchestrator/notifier.hpp"

#include "orchestrator/strays.hpp"

#include <board/app.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;  // NOLINT: POSIX declares it nowhere in a header

namespace board::orchestrator {
namespace {

/// The longest question text passed on; a notification is a pointer to the board, not a copy.
constexpr std::size_t max_text = 2000;

std::string clipped(std::string text) {
    if (text.size() > max_text) {
        text.resize(max_text);
        // Do not leave half a UTF-8 sequence at the end.
        while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
            text.pop_back();
        if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80) != 0) text.pop_back();
        text += "…";
    }
    return text;
}

bool is_ours(std::string_view entry) {
    for (std::string_view name : {"BOARD_REASON=",
                                  "BOARD_TICKET=",
                                  "BOARD_TITLE=",
                                  "BOARD_STATUS=",
                                  "BOARD_AWAITING=",
                                  "BOARD_HANDOFF=",
                                  "BOARD_QUESTION_ID=",
                                  "BOARD_QUESTION=",
                                  "BOARD_RESPONSE_TYPE=",
                                  "BOARD_OPTIONS=",
                                  "BOARD_REQUEST=",
                                  "BOARD_ASKED_BY=",
                                  "BOARD_URL=",
                                  "BOARD_FOR=",
                                  "BOARD_REMINDER=",
                                  "BOARD_DIR="}) {
        if (entry.substr(0, name.size()) == name) return true;
    }
    return false;
}

Notification base(const Ticket& t, Notification::Reason reason, const Policy& policy) {
    Notification n;
    n.reason = reason;
    n.reminder = t.reminders;
    if (t.awaiting) n.people = policy.handoff(*t.awaiting).reviewers;
    for (const auto& name : t.escalated_to)
        if (std::find(n.people.begin(), n.people.end(), name) == n.people.end())
            n.people.push_back(name);
    n.ticket = t.id;
    n.title = clipped(t.title);
    n.status = std::string{to_string(t.status)};
    if (t.awaiting) {
        n.awaiting = std::string{to_string(*t.awaiting)};
        n.handoff = std::string{to_string(t.handoff)};
    }
    if (const auto request = app::request_of(t)) {
        n.request = clipped(request->words);
        n.asked_by = request->asked_by;
    }
    return n;
}

}  // namespace

std::string_view to_string(Notification::Reason reason) {
    switch (reason) {
        case Notification::Reason::question:
            return "question";
        case Notification::Reason::reminder:
            return "reminder";
        case Notification::Reason::escalation:
            return "escalation";
        case Notification::Reason::awaiting:
            break;
    }
    return "awaiting";
}

std::vector<std::string> Notification::environment() const {
    std::vector<std::string> env{"BOARD_REASON=" + std::string{to_string(reason)},
                                 "BOARD_TICKET=" + ticket,
                                 "BOARD_TITLE=" + title,
                                 "BOARD_STATUS=" + status,
                                 "BOARD_AWAITING=" + awaiting,
                                 "BOARD_HANDOFF=" + handoff,
                                 "BOARD_REQUEST=" + request,
                                 "BOARD_ASKED_BY=" + asked_by,
                                 "BOARD_URL=" + url,
                                 "BOARD_FOR=" + fmt::format("{}", fmt::join(people, ",")),
                                 "BOARD_REMINDER=" + std::to_string(reminder)};
    if (reason == Reason::question) {
        env.push_back("BOARD_QUESTION_ID=" + question_id);
        env.push_back("BOARD_QUESTION=" + question);
        env.push_back("BOARD_RESPONSE_TYPE=" + response_type);
        std::string lines;
        for (const auto& [id, label] : options) lines += id + "=" + label + "\n";
        env.push_back("BOARD_OPTIONS=" + lines);
    }
    return env;
}

std::string Notification::json() const {
    boost::json::object out{{"reason", to_string(reason)},
                            {"ticket", ticket},
                            {"title", title},
                            {"status", status},
                            {"awaiting", nullptr},
                            {"handoff", nullptr}};
    if (!awaiting.empty()) out["awaiting"] = awaiting;
    if (!handoff.empty()) out["handoff"] = handoff;
    out["request"] = request;
    out["asked_by"] = asked_by;
    out["url"] = url.empty() ? boost::json::value(nullptr) : boost::json::value(url);
    boost::json::array names;
    for (const auto& name : people) names.emplace_back(name);
    out["for"] = std::move(names);
    out["reminder"] = reminder;
    if (reason == Reason::question) {
        out["question_id"] = question_id;
        out["question"] = question;
        out["response_type"] = response_type;
        boost::json::array choices;
        for (const auto& [id, label] : options)
            choices.push_back(boost::json::object{{"id", id}, {"label", label}});
        out["options"] = std::move(choices);
    }
    return boost::json::serialize(out) + "\n";
}

std::vector<Notification> notifications_for(const Ticket& before,
                                            const Ticket& after,
                                            const Policy& policy) {
    std::vector<Notification> out;
    if (after.id.empty()) return out;
    const bool same = before.id == after.id;
    bool asked = false;
    for (const auto& q : after.questions) {
        if (q.status != QuestionStatus::pending) continue;
        const bool known = same && std::any_of(before.questions.begin(),
                                               before.questions.end(),
                                               [&](const Question& b) { return b.id == q.id; });
        if (known) continue;
        Notification n = base(after, Notification::Reason::question, policy);
        n.question_id = after.id + "." + q.id;
        n.question = clipped(q.question);
        n.response_type = std::string{to_string(q.response_type)};
        for (const auto& o : q.options)
            n.options.emplace_back(o.id, o.label.empty() ? o.id : o.label);
        out.push_back(std::move(n));
        asked = true;
    }
    const bool newly_awaiting =
        after.awaiting && (!same || !before.awaiting || *before.awaiting != *after.awaiting);
    // A question that hands the ticket to a person is announced once, as the question.
    if (newly_awaiting && !(asked && after.handoff == Handoff::question))
        out.insert(out.begin(), base(after, Notification::Reason::awaiting, policy));
    if (same && !newly_awaiting && after.awaiting) {
        if (after.escalated_at != 0 && before.escalated_at == 0)
            out.push_back(base(after, Notification::Reason::escalation, policy));
        else if (after.reminders > before.reminders)
            out.push_back(base(after, Notification::Reason::reminder, policy));
    }
    return out;
}

Notifier::Notifier(NotifyConfig config,
                   std::filesystem::path board,
                   std::function<void(const std::string&)> report)
    : config_(std::move(config))
    , board_(std::move(board))
    , report_(std::move(report)) {}

void Notifier::fail(std::string message) {
    ++failed_;
    if (report_ && reported_.insert(message).second)
        report_(message + " (reported once; later ones are counted)");
    last_error_ = std::move(message);
}

Notifier::~Notifier() {
    for (auto& child : running_) {
        ::kill(-child.pid, SIGKILL);
        int status = 0;
        while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
        }
        note_waited(child.pid);
    }
}

void Notifier::notify_changes(const Ticket& before, const Ticket& after) {
    if (config_.command.empty()) return;
    for (auto& n : notifications_for(before, after, policy_)) {
        if (!page_.empty()) n.url = page_ + "#/ticket/" + n.ticket;
        notify(n);
    }
}

void Notifier::notify(const Notification& notification) {
    if (config_.command.empty()) return;
    reap();
    if (running_.size() >= static_cast<std::size_t>(std::max(config_.max_parallel, 1))) {
        ++dropped_;
        last_error_ = "notify: " + std::to_string(running_.size()) +
                      " commands still running; dropped the notification for " +
                      notification.ticket;
        if (report_ && reported_.insert("dropped").second)
            report_("notify: " + std::to_string(running_.size()) +
                    " commands still running (notify.max_parallel): a notification was dropped "
                    "(reported once; later ones are counted)");
        return;
    }

    // Environment: ours first, then the daemon's own minus any stale BOARD_* of ours.
    std::vector<std::string> env = notification.environment();
    env.push_back("BOARD_DIR=" + board_.string());
    for (char** e = environ; e && *e; ++e)
        if (!is_ours(*e)) env.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = config_.command;
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        fail(std::string{"notify: pipe: "} + std::strerror(errno));
        return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
    ::posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], STDIN_FILENO);
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);  // nothing else
    ::posix_spawn_file_actions_addchdir_np(&actions, board_.c_str());
    sigset_t all_signals, no_signals;
    sigfillset(&all_signals);
    sigemptyset(&no_signals);
    ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
    ::posix_spawnattr_setsigmask(&attributes, &no_signals);
    ::posix_spawnattr_setpgroup(&attributes, 0);  // its own group: a timeout kills all of it
    ::posix_spawnattr_setflags(
        &attributes,
        static_cast<short>(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP));
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        fail("notify: cannot run `" + config_.command.front() + "`: " + std::strerror(rc));
        return;
    }
    // The JSON fits the pipe's buffer (64 KiB; texts are clipped), so this write does not
    // wait for the command. Our read end stays open until after it, so a command that exits
    // without reading cannot turn the write into a SIGPIPE.
    const std::string payload = notification.json();
    ::fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK);
    [[maybe_unused]] const ssize_t written = ::write(pipe_fds[1], payload.data(), payload.size());
    ::close(pipe_fds[1]);
    ::close(pipe_fds[0]);
    note_launched(pid);
    running_.push_back(Child{pid, std::chrono::steady_clock::now(), false});
    ++started_;
}

std::vector<int> Notifier::in_flight_pids() const {
    std::vector<int> pids;
    for (const auto& command : running_) pids.push_back(command.pid);
    return pids;
}

void Notifier::reap(std::chrono::steady_clock::time_point now) {
    for (auto it = running_.begin(); it != running_.end();) {
        int status = 0;
        const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
        if (done == it->pid || (done < 0 && errno == ECHILD)) {
            note_waited(it->pid);
            const std::string command = "notify: `" + config_.command.front() + "`";
            if (done != it->pid) {
                fail(command + " could not be waited for");
            } else if (it->killed) {
                fail(command + " ran longer than its " + std::to_string(config_.timeout.count()) +
                     " ms (notify.timeout) and was killed");
            } else if (WIFSIGNALED(status)) {
                fail(command + " was killed by signal " + std::to_string(WTERMSIG(status)));
            } else if (WEXITSTATUS(status) == 127) {
                fail(command + " exited 127: a program it runs was not found");
            } else if (WEXITSTATUS(status) != 0) {
                fail(command + " exited " + std::to_string(WEXITSTATUS(status)));
            }
            it = running_.erase(it);
            continue;
        }
        if (!it->killed && now - it->started > config_.timeout) {
            ::kill(-it->pid, SIGKILL);
            it->killed = true;
        }
        ++it;
    }
}

std::optional<std::string> Notifier::trouble() const {
    if (failed_ == 0 && dropped_ == 0) return std::nullopt;
    return fmt::format(
        "{} command(s) started, {} failed, {} notification(s) dropped; the last problem: {}",
        started_,
        failed_,
        dropped_,
        last_error_);
}

}  // namespace board::orchestrator
