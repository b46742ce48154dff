// board_soak: board-daemon under a storm, killed with SIGKILL every few seconds, and then
// the board checked for anything lost or half-done.
//
//   board_soak [--seconds N] [--tickets N] [--keep]
//
// On a temporary board whose agent is board_fake_agent, the daemon runs with --watch and
// --http on a fixed loopback port. The agents are a mix: fast, slow, failing once, flooding
// past their output cap, leaving a grandchild behind, asking a blocking question, hanging
// until their timeout. Meanwhile, until the time is up:
//   - a CLI writer adds notes, creates tickets and answers the agents' questions;
//   - an HTTP client approves whatever awaits an approval or a review;
//   - the daemon is killed with SIGKILL every 1.5 to 4 s and started again, its peak memory
//     (VmHWM) read just before each kill.
// At the end one last daemon recovers the board and is stopped with SIGTERM. Then:
//   - `board verify` passes;
//   - every run-started has exactly one end (run-finished or run-interrupted), and no end
//     lacks its start;
//   - every write that was acknowledged (exit 0, HTTP 200/201) is in the logs;
//   - the daemon's peak memory stayed under 100 MB;
//   - no run log is longer than its cap (plus the daemon's own marker lines).
// The figures are printed; exit status 0 when every check holds, 1 otherwise, 2 on a usage
// or setup error.

#include "support/wait.hpp"

#include <board/event_log.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <random>
#include <set>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef BOARD_BINARY
#error "BOARD_BINARY, DAEMON_BINARY and FAKE_AGENT_BINARY name the programs under test"
#endif

extern char** environ;  // NOLINT: POSIX

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t output_cap = 1u << 20;  // agents.default.max_output below
constexpr long rss_limit_kb = 100 * 1024;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

struct Ran {
    int code = -1;
    std::string out;
};

/// Runs `argv` to its end with stdout captured (stderr to `err_file`, appended).
Ran run(const std::vector<std::string>& argv, const fs::path& err_file) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addopen(
        &actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    Ran ran;
    if (rc != 0) {
        ::close(pipe_fds[0]);
        return ran;
    }
    char buffer[65536];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        ran.out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ran.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return ran;
}

/// One HTTP/1.1 request on a fresh connection; nullopt when nothing answered (the daemon is
/// down). The status code and the body.
std::optional<std::pair<int, std::string>> http(int port,
                                                const std::string& method,
                                                const std::string& target,
                                                const std::string& token,
                                                const std::string& body = {}) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::nullopt;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const timeval limit{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {  // NOLINT
        ::close(fd);
        return std::nullopt;
    }
    std::string request =
        method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nAuthorization: Bearer " + token + "\r\nX-Board-Request: 1\r\nConnection: close\r\n";
    if (!body.empty())
        request +=
            "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n";
    request += "\r\n" + body;
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
        ::close(fd);
        return std::nullopt;
    }
    std::string response;
    char buffer[65536];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
        response.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    const auto space = response.find(' ');
    const auto head_end = response.find("\r\n\r\n");
    if (response.rfind("HTTP/1.1 ", 0) != 0 || space == std::string::npos ||
        head_end == std::string::npos)
        return std::nullopt;
    return std::make_pair(std::atoi(response.c_str() + space + 1), response.substr(head_end + 4));
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);   // NOLINT: POSIX
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);  // NOLINT: POSIX
    ::close(fd);
    return ntohs(addr.sin_port);
}

/// The peak resident memory of `pid` (VmHWM), in kB; 0 when it cannot be read.
long peak_rss_kb(pid_t pid) {
    std::istringstream status{read_file("/proc/" + std::to_string(pid) + "/status")};
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
}

/// What the fake agent does in every phase of a ticket, by the ticket's place in the mix.
struct Behaviour {
    const char* name;
    const char* script;  ///< fake-agent script (tests/fake_agent/fake_agent.cpp); "" = default
};

const std::vector<Behaviour>& mix() {
    static const std::vector<Behaviour> behaviours{
        {"fast", ""},
        {"slow", "sleep=700 signal=COMPLETE\n"},
        {"failing once", "exit=3\nsignal=COMPLETE\n"},
        {"flooding", "flood=3 signal=COMPLETE\n"},
        {"forking", "grandchild=closed grandchild=setsid signal=COMPLETE\n"},
        {"asking",
         "question='{\"question\":\"Which DB?\",\"type\":\"blocking\"}' signal=COMPLETE\n"
         "signal=COMPLETE\n"},
        {"hanging once", "hang\nsignal=COMPLETE\n"},
    };
    return behaviours;
}

struct Acknowledged {
    std::mutex mutex;
    std::vector<std::pair<std::string, std::string>> notes;      // ticket, text
    std::vector<std::pair<std::string, std::string>> creates;    // ticket, title
    std::vector<std::pair<std::string, std::string>> answers;    // ticket, question id
    std::vector<std::pair<std::string, std::string>> approvals;  // ticket, note
};

struct Soak {
    fs::path root;
    fs::path scratch;
    // The programs under test: this build's by default, or others (the installed ones).
    std::string board_binary = BOARD_BINARY;
    std::string daemon_binary = DAEMON_BINARY;
    int seconds = 60;
    int tickets = 14;
    int port = 0;
    std::atomic<bool> stopping{false};
    Acknowledged acked;
    std::atomic<long> cli_calls{0};
    std::atomic<long> http_calls{0};

    Ran board(std::vector<std::string> args) const {
        args.insert(args.begin(), board_binary);
        args.push_back("--board");
        args.push_back(root.string());
        return run(args, scratch / "cli.err");
    }

    std::string create(const std::string& title) {
        const Ran r = board({"create", title});
        if (r.code != 0) return {};
        const std::string id = r.out.substr(0, r.out.find('\n'));
        const std::size_t n = static_cast<std::size_t>(std::stoi(id.substr(id.find('-') + 1)));
        const auto& b = mix()[n % mix().size()];
        if (*b.script)
            for (const char* phase : {"research", "planning", "implementing", "review"})
                write_file(root / "tickets" / id / "fake-agent" / phase, b.script);
        return id;
    }

    std::vector<std::string> ticket_ids() const {
        std::vector<std::string> ids;
        for (const auto& entry : fs::directory_iterator(root / "tickets"))
            if (entry.is_directory() && entry.path().filename().string().front() != '.')
                ids.push_back(entry.path().filename().string());
        return ids;
    }

    void cli_writer() {
        std::mt19937 random{1};
        for (long k = 0; !stopping; ++k) {
            const auto ids = ticket_ids();
            if (k % 25 == 24) {
                const std::string title = "soak create " + std::to_string(k);
                if (const std::string id = create(title); !id.empty()) {
                    const std::lock_guard lock{acked.mutex};
                    acked.creates.emplace_back(id, title);
                }
            } else if (!ids.empty()) {
                const std::string& id = ids[random() % ids.size()];
                const std::string text = "soak note " + std::to_string(k);
                if (board({"note", id, text, "--from", "human"}).code == 0) {
                    const std::lock_guard lock{acked.mutex};
                    acked.notes.emplace_back(id, text);
                }
            }
            const Ran pending = board({"questions", "--pending", "--json"});
            if (pending.code == 0) {
                boost::system::error_code ec;
                const auto list = boost::json::parse(pending.out, ec);
                if (!ec && list.is_array())
                    for (const auto& q : list.as_array()) {
                        const std::string qid{q.at("id").as_string()};
                        if (board({"answer", qid, "postgres"}).code == 0) {
                            const std::lock_guard lock{acked.mutex};
                            acked.answers.emplace_back(qid.substr(0, qid.rfind('.')),
                                                       qid.substr(qid.rfind('.') + 1));
                        }
                    }
            }
            cli_calls += 2;
            // A busy team, not a fork bomb: the board should grow by tens of tickets a minute.
            std::this_thread::sleep_for(std::chrono::milliseconds{40});
        }
    }

    void http_approver() {
        const std::string token = read_file(root / ".board" / "http-token");
        std::string trimmed = token.substr(0, token.find('\n'));
        for (long k = 0; !stopping; ++k) {
            ++http_calls;
            const auto inbox = http(port, "GET", "/api/inbox", trimmed);
            if (!inbox || inbox->first != 200) {
                // The daemon is down between a kill and its restart: try again shortly.
                std::this_thread::sleep_for(std::chrono::milliseconds{50});
                continue;
            }
            boost::system::error_code ec;
            const auto items = boost::json::parse(inbox->second, ec);
            if (ec || !items.is_array()) continue;
            bool any = false;
            for (const auto& item : items.as_array()) {
                const auto* awaiting = item.as_object().if_contains("awaiting");
                if (!awaiting || !awaiting->is_string()) continue;
                const std::string kind{awaiting->as_string()};
                if (kind != "approval" && kind != "review") continue;
                const std::string id{item.at("id").as_string()};
                const std::string note = "soak approve " + std::to_string(k) + " " + id;
                ++http_calls;
                const auto done = http(port,
                                       "POST",
                                       "/api/tickets/" + id + "/approve",
                                       trimmed,
                                       boost::json::serialize(boost::json::object{{"note", note}}));
                if (done && done->first == 200) {
                    any = true;
                    const std::lock_guard lock{acked.mutex};
                    acked.approvals.emplace_back(id, note);
                }
            }
            // Nothing to approve: look again in a while rather than spin on the inbox.
            if (!any) std::this_thread::sleep_for(std::chrono::milliseconds{100});
        }
    }

    pid_t start_daemon(const std::vector<std::string>& extra) const {
        std::vector<std::string> argv{daemon_binary,
                                      "--board",
                                      root.string(),
                                      "--http",
                                      "127.0.0.1:" + std::to_string(port),
                                      "--log-format",
                                      "text"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        const fs::path out = scratch / "daemon.out";
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(
            &actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT
        args.push_back(nullptr);
        pid_t pid = -1;
        if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
        posix_spawn_file_actions_destroy(&actions);
        return pid;
    }
};

/// Processes whose environment names a ticket folder of the board at `root`: agents and
/// whatever they started.
std::vector<pid_t> agents_of(const fs::path& root) {
    std::vector<pid_t> out;
    const std::string wanted = "BOARD_TICKET_DIR=" + (root / "tickets").string() + "/";
    std::error_code ec;
    for (const auto& proc : fs::directory_iterator("/proc", ec)) {
        const std::string name = proc.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string environ_text = read_file(proc.path() / "environ");
        for (std::size_t at = 0; at < environ_text.size();) {
            const auto end = std::min(environ_text.find('\0', at), environ_text.size());
            if (environ_text.compare(at, wanted.size(), wanted) == 0) {
                out.push_back(std::atoi(name.c_str()));
                break;
            }
            at = end + 1;
        }
    }
    return out;
}

struct Figures {
    int kills = 0;
    long peak_rss_kb = 0;
    long runs_started = 0;
    long runs_finished = 0;
    long runs_interrupted = 0;
    long events = 0;
    long writes_checked = 0;
    std::uint64_t largest_run_log = 0;
    std::vector<std::string> failures;
};

void check_board(Soak& soak, Figures& f) {
    const Ran verify = soak.board({"verify"});
    if (verify.code != 0)
        f.failures.push_back("board verify exited " + std::to_string(verify.code) + ":\n" +
                             verify.out);

    std::set<std::pair<std::string, std::string>> notes, titles, answered, verdicts;
    for (const std::string& id : soak.ticket_ids()) {
        const fs::path dir = soak.root / "tickets" / id;
        std::map<std::string, std::pair<int, int>> runs;  // run id → starts, ends
        const auto read = board::read_log(dir / "events.jsonl", [&](const board::Event& e) {
            ++f.events;
            if (const auto* s = std::get_if<board::RunStarted>(&e.payload)) {
                ++runs[s->run].first;
                ++f.runs_started;
            } else if (const auto* d = std::get_if<board::RunFinished>(&e.payload)) {
                ++runs[d->run].second;
                ++f.runs_finished;
            } else if (const auto* i = std::get_if<board::RunInterrupted>(&e.payload)) {
                ++runs[i->run].second;
                ++f.runs_interrupted;
            } else if (const auto* n = std::get_if<board::NoteAdded>(&e.payload)) {
                notes.emplace(id, n->text);
            } else if (const auto* c = std::get_if<board::Created>(&e.payload)) {
                titles.emplace(id, c->title);
            } else if (const auto* a = std::get_if<board::QuestionAnswered>(&e.payload)) {
                answered.emplace(id, a->question_id);
            } else if (const auto* v = std::get_if<board::VerdictGiven>(&e.payload)) {
                verdicts.emplace(id, v->note);
            }
        });
        if (const auto* error = std::get_if<board::LogError>(&read))
            f.failures.push_back(error->message);
        for (const auto& [run, counts] : runs)
            if (counts.first != 1 || counts.second != 1)
                f.failures.push_back(id + " run " + run + ": " + std::to_string(counts.first) +
                                     " run-started, " + std::to_string(counts.second) + " ends");
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir / "runs", ec)) {
            if (entry.path().extension() != ".log") continue;
            const auto size = entry.file_size(ec);
            f.largest_run_log = std::max<std::uint64_t>(f.largest_run_log, size);
            // The daemon's own lines (a timeout, the cap's marker) come on top of the cap.
            if (size > output_cap + 4096)
                f.failures.push_back(entry.path().string() + " is " + std::to_string(size) +
                                     " bytes, over its cap");
        }
    }
    const auto expect = [&](const auto& acknowledged, const auto& present, const char* what) {
        for (const auto& item : acknowledged) {
            ++f.writes_checked;
            if (present.count(item) == 0)
                f.failures.push_back(std::string{"acknowledged "} + what +
                                     " missing: " + item.first + " " + item.second);
        }
    };
    expect(soak.acked.notes, notes, "note");
    expect(soak.acked.creates, titles, "create");
    expect(soak.acked.answers, answered, "answer");
    expect(soak.acked.approvals, verdicts, "approval");
}

}  // namespace

int main(int argc, char** argv) {
    Soak soak;
    bool keep = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc)
            soak.seconds = std::atoi(argv[++i]);
        else if (arg == "--tickets" && i + 1 < argc)
            soak.tickets = std::atoi(argv[++i]);
        else if (arg == "--keep")
            keep = true;
        else if (arg == "--board-binary" && i + 1 < argc)
            soak.board_binary = argv[++i];
        else if (arg == "--daemon-binary" && i + 1 < argc)
            soak.daemon_binary = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: board_soak [--seconds N] [--tickets N] [--keep] "
                         "[--board-binary PATH] [--daemon-binary PATH]\n");
            return 2;
        }
    }
    std::signal(SIGPIPE, SIG_IGN);
    std::string pattern = (fs::temp_directory_path() / "board-soak-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return 2;
    soak.scratch = pattern;
    soak.root = soak.scratch / "board";
    soak.port = free_port();
    if (run({soak.board_binary, "init", soak.root.string(), "--prefix", "S"},
            soak.scratch / "cli.err")
            .code != 0)
        return 2;
    write_file(soak.root / "board.yaml",
               "prefix: S\n"
               "auto: { research: true, planning: true }\n"
               "wip: { research: 4, planning: 4, implementing: 4 }\n"
               "budget: { max_attempts: 3, retry_backoff: 100ms, retry_backoff_max: 500ms }\n"
               "daemon: { max_parallel: 4, poll: 1s, debounce: 0s, grace: 1s }\n"
               "agents:\n"
               "  default: { command: [" FAKE_AGENT_BINARY
               "], dialect: generic, sandbox: none, "
               "timeout: 2s, max_output: 1MB }\n"
               "  implementing: { worktree: false }\n");
    for (int i = 0; i < soak.tickets; ++i)
        if (soak.create("soak ticket " + std::to_string(i)).empty()) return 2;

    std::printf("board_soak: %d s on %s, %s on 127.0.0.1:%d\n",
                soak.seconds,
                soak.root.c_str(),
                soak.daemon_binary.c_str(),
                soak.port);
    std::fflush(stdout);
    Figures f;
    // The first daemon makes the HTTP token; the approver needs it.
    pid_t daemon = soak.start_daemon({"--watch"});
    const fs::path token = soak.root / ".board" / "http-token";
    if (!board::testing::wait_until(
            {token.parent_path()}, std::chrono::seconds{30}, [&] { return fs::exists(token); })) {
        std::fprintf(stderr,
                     "board_soak: the daemon made no HTTP token: %s\n",
                     read_file(soak.scratch / "daemon.out").c_str());
        return 2;
    }
    std::thread writer{[&] { soak.cli_writer(); }};
    std::thread approver{[&] { soak.http_approver(); }};

    std::mt19937 random{42};
    const auto end = Clock::now() + std::chrono::seconds{soak.seconds};
    while (Clock::now() < end) {
        // The pause before a kill is the scenario: SIGKILL at a moment nobody chose.
        std::this_thread::sleep_for(std::chrono::milliseconds{1500 + random() % 2500});
        f.peak_rss_kb = std::max(f.peak_rss_kb, peak_rss_kb(daemon));
        ::kill(daemon, SIGKILL);
        int status = 0;
        ::waitpid(daemon, &status, 0);
        ++f.kills;
        daemon = soak.start_daemon({"--watch"});
    }
    soak.stopping = true;
    writer.join();
    approver.join();
    // The last daemon recovers what the last kill interrupted, then stops gracefully.
    std::this_thread::sleep_for(std::chrono::seconds{2});
    f.peak_rss_kb = std::max(f.peak_rss_kb, peak_rss_kb(daemon));
    ::kill(daemon, SIGTERM);
    int status = 0;
    ::waitpid(daemon, &status, 0);
    if (!WIFEXITED(status))
        f.failures.push_back("the last daemon did not exit on SIGTERM (status " +
                             std::to_string(status) + ")");

    check_board(soak, f);
    // Nothing an agent started may outlive the daemon that ran it, not even what left the
    // agent's session (the fake agent's grandchild=setsid).
    for (const pid_t pid : agents_of(soak.root)) {
        f.failures.push_back("process " + std::to_string(pid) + " of an agent run is still alive");
        ::kill(pid, SIGKILL);
    }
    if (f.peak_rss_kb > rss_limit_kb)
        f.failures.push_back("the daemon's peak memory was " +
                             std::to_string(f.peak_rss_kb / 1024) + " MB");

    std::printf("kills of the daemon (SIGKILL): %d\n", f.kills);
    std::printf("runs: %ld started, %ld finished, %ld interrupted\n",
                f.runs_started,
                f.runs_finished,
                f.runs_interrupted);
    std::printf(
        "acknowledged writes checked: %ld (notes %zu, creates %zu, answers %zu, HTTP approvals "
        "%zu)\n",
        f.writes_checked,
        soak.acked.notes.size(),
        soak.acked.creates.size(),
        soak.acked.answers.size(),
        soak.acked.approvals.size());
    std::printf("events in %zu logs: %ld\n", soak.ticket_ids().size(), f.events);
    std::printf(
        "daemon peak memory: %ld MB (limit %ld)\n", f.peak_rss_kb / 1024, rss_limit_kb / 1024);
    std::printf("largest run log: %llu bytes (cap %llu)\n",
                static_cast<unsigned long long>(f.largest_run_log),
                static_cast<unsigned long long>(output_cap));
    for (const auto& failure : f.failures) std::printf("FAILED: %s\n", failure.c_str());
    std::printf("%s\n", f.failures.empty() ? "board_soak: every check held" : "board_soak: FAILED");
    if (!keep && f.failures.empty())
        fs::remove_all(soak.scratch);
    else
        std::printf("board kept at %s\n", soak.root.c_str());
    return f.failures.empty() ? 0 : 1;
}
