// board_daemon_bench: the daemon's overhead, measured as whole processes in one run.
//
//   board_daemon_bench DAEMON NULL_AGENT BOARD_GEN [--tickets 1000] [--rounds 5]
//                      [--rss-tickets 10000] [--also OTHER_DAEMON] [--sandbox none]
//
// 1. Throughput: N backlog tickets taken through research by `board-daemon --max-parallel 2`
//    with board_null_agent, against a bare loop doing the same durable work: launch the same
//    agent N times keeping 2 in flight (stdout to a file, as the daemon's logs are), with an
//    fdatasync'd append to the ticket's log before each launch and another after each exit
//    (the daemon's run-started and outcome). Rounds alternate the two (with --also, a second
//    daemon binary after the first, e.g. the previous build); medians and ratios are printed.
//    Each round's board, and the bare loop's folder, is a new folder whose logs exist before
//    the clock starts, and every one is removed only at the end: a file
//    system that slows down inode allocation after mass deletion (ext4 without a journal)
//    would otherwise charge the harness's deletions to the daemon.
//    A second baseline, the bare loop plus the file work a board's rules ask of each run (run
//    folder, saved prompt, run log, the draft taken as the artifact with fdatasync and folder
//    fsync, ticket.json), shows what the daemon itself adds: deciding, folding, confining,
//    reading the agent's output. The daemon's own CPU (its threads, not its agents') is
//    printed as well: the part of its overhead that no disk explains, and its agents' CPU
//    beside the loops' (on two cores, what the agents spend is as much a cost as what the
//    launcher spends). `--sandbox none` runs the daemon's agents unconfined (board.yaml's
//    `sandbox: none`): a diagnosis of what confinement costs, not the daemon as it ships.
// 2. Memory: the daemon's peak RSS (wait4's ru_maxrss) on a board_gen board of M tickets
//    x ~20 events, working it for up to 10 s with the null agent.

#include <board/codec.hpp>
#include <board/event.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

pid_t spawn(const std::vector<std::string>& argv,
            const std::vector<std::string>& extra_env,
            const std::string& out_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(
        &actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_store(extra_env);
    for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
    std::vector<char*> env;
    for (auto& e : env_store) env.push_back(e.data());
    env.push_back(nullptr);
    pid_t pid = -1;
    if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data()) != 0) {
        std::perror(args[0]);
        std::exit(1);
    }
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

int wait_for(pid_t pid, rusage* usage = nullptr) {
    int status = 0;
    rusage local{};
    ::wait4(pid, &status, 0, usage ? usage : &local);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void make_backlog_board(const fs::path& root, int tickets, const std::string& sandbox) {
    fs::create_directories(root / "tickets");
    std::ofstream(root / "board.yaml")
        << "prefix: B\n"
           "auto: { research: true, planning: false }\n"
           "gates: { research: none }\n"
           "wip: { research: 0 }\n"
           "daemon: { max_parallel: 2, poll: 10s, debounce: 0s }\n"
           "agents:\n  default: { command: [board_null_agent], timeout: 1m, sandbox: "
        << sandbox << " }\n";
    for (int i = 1; i <= tickets; ++i) {
        const std::string id = "B-" + std::to_string(i);
        fs::create_directories(root / "tickets" / id);
        board::Created c;
        c.ticket = id;
        c.title = "ticket " + std::to_string(i);
        board::Event e{1,
                       1,
                       id + "-e1",
                       1'767'225'600'000 + i,
                       board::Actor{board::ActorKind::human, "bench"},
                       c};
        std::ofstream(root / "tickets" / id / "events.jsonl") << board::encode_event(e) << '\n';
    }
}

/// One line appended to `file` and on disk before it returns, as an event is.
void append_durably(const fs::path& file, const std::string& line) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
        ::fdatasync(fd) != 0) {
        std::perror(file.c_str());
        std::exit(1);
    }
    ::close(fd);
}

/// What a process spent: CPU seconds (user + system) and minor page faults, the fresh pages
/// it touched (on a VM that maps each one through the hypervisor, memory touched costs as
/// much as instructions run).
struct Spent {
    double cpu_s = 0;
    double faults = 0;

    friend Spent operator-(const Spent& a, const Spent& b) {
        return {a.cpu_s - b.cpu_s, a.faults - b.faults};
    }
};

/// What this process has spent itself (RUSAGE_SELF), or its children it waited for
/// (RUSAGE_CHILDREN): the agents of a loop.
Spent spent_by(int who) {
    rusage usage{};
    ::getrusage(who, &usage);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return {seconds(usage.ru_utime) + seconds(usage.ru_stime),
            static_cast<double>(usage.ru_minflt)};
}

/// Waits for `pid` to end and returns what its own threads spent, not the children it waited
/// for: read from /proc while it is a zombie, then reaped. The exit code goes to `code`, and
/// what the children it waited for (its agents) spent to `children`. A failed read gives
/// a cpu_s of -1 in both.
Spent own_spending(pid_t pid, int& code, Spent& children) {
    siginfo_t info{};
    int waited = 0;
    while ((waited = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT)) != 0 &&
           errno == EINTR) {
    }
    children = {-1, 0};
    if (waited != 0) {
        code = wait_for(pid);
        return {-1, 0};
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text{std::istreambuf_iterator<char>(stat), {}};
    // Fields after the command name (which may hold spaces): state is field 3, minflt 10,
    // cminflt (of the children it waited for) 11, utime 14, stime 15, and the children's
    // cutime 16, cstime 17 (times in clock ticks).
    Spent own{-1, 0};
    if (const auto close = text.rfind(')'); close != std::string::npos) {
        std::istringstream fields(text.substr(close + 2));
        std::string field;
        long own_ticks = 0, waited_for_ticks = 0, own_faults = 0, waited_for_faults = 0;
        int read = 0;
        for (int i = 3; i <= 17 && fields >> field; ++i, ++read) {
            if (i == 10) own_faults = std::stol(field);
            if (i == 11) waited_for_faults = std::stol(field);
            if (i == 14 || i == 15) own_ticks += std::stol(field);
            if (i == 16 || i == 17) waited_for_ticks += std::stol(field);
        }
        if (read == 15) {
            const auto per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
            own = {static_cast<double>(own_ticks) / per_second, static_cast<double>(own_faults)};
            children = {static_cast<double>(waited_for_ticks) / per_second,
                        static_cast<double>(waited_for_faults)};
        }
    }
    code = wait_for(pid);
    return own;
}

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// The ticket of the run whose agent `done` (what wait() returned) was, taken out of
/// `flight` (pid, ticket).
int landed(std::vector<std::pair<pid_t, int>>& flight, pid_t done) {
    const auto it =
        std::find_if(flight.begin(), flight.end(), [&](const auto& f) { return f.first == done; });
    if (it == flight.end()) {
        std::perror("wait");
        std::exit(1);
    }
    const int ticket = it->second;
    flight.erase(it);
    return ticket;
}

/// `content` written to `file` as board writes a rewrite: a temp file beside it, renamed over
/// it; with `durable`, the temp file fdatasync'd first and the folder fsync'd after.
void write_atomically(const fs::path& file, const std::string& content, bool durable) {
    const fs::path temp = file.parent_path() / ("." + file.filename().string() + ".tmp");
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 ||
        ::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()) ||
        (durable && ::fdatasync(fd) != 0) || ::close(fd) != 0 ||
        ::rename(temp.c_str(), file.c_str()) != 0) {
        std::perror(file.c_str());
        std::exit(1);
    }
    if (!durable) return;
    const int dir = ::open(file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || ::fsync(dir) != 0) {
        std::perror(file.parent_path().c_str());
        std::exit(1);
    }
    ::close(dir);
}

/// The bare loop again with the file work a board's rules ask of every run besides its two
/// events (what the daemon does, without deciding, folding, confining or reading output): the
/// run folder and the saved prompt, the agent's output to the run log, its draft taken as the
/// artifact durably, `ticket.json` refreshed. Returns the seconds it took.
double bare_with_board_files(const fs::path& dir, const std::string& agent, int tickets) {
    for (int i = 0; i < tickets; ++i) {
        fs::create_directories(dir / std::to_string(i));
        std::ofstream(dir / std::to_string(i) / "events.jsonl") << R"({"type":"created"})" << '\n';
    }
    const auto start = Clock::now();
    std::vector<std::pair<pid_t, int>> flight;
    const auto land = [&](pid_t done) {
        const fs::path ticket = dir / std::to_string(landed(flight, done));
        std::ifstream draft(ticket / "runs" / "0001-research" / "research.md");
        const std::string text{std::istreambuf_iterator<char>(draft), {}};
        write_atomically(ticket / "research.md", text, true);
        append_durably(ticket / "events.jsonl",
                       R"({"type":"run-finished"})"
                       "\n");
        write_atomically(ticket / "ticket.json",
                         R"({"status":"ready"})"
                         "\n",
                         false);
    };
    for (int i = 0; i < tickets; ++i) {
        if (flight.size() == 2) land(::wait(nullptr));
        const fs::path ticket = dir / std::to_string(i);
        append_durably(ticket / "events.jsonl",
                       R"({"type":"run-started"})"
                       "\n");
        fs::create_directories(ticket / "runs" / "0001-research");
        write_atomically(ticket / "runs" / "0001-research.prompt.md", "Research ticket.\n", false);
        flight.emplace_back(spawn({agent},
                                  {"BOARD_ARTIFACT=" +
                                   (ticket / "runs" / "0001-research" / "research.md").string()},
                                  (ticket / "runs" / "0001-research.log").string()),
                            i);
    }
    while (!flight.empty()) land(::wait(nullptr));
    return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(
            stderr,
            "usage: %s DAEMON NULL_AGENT BOARD_GEN [--tickets N] [--rounds R] [--rss-tickets M] "
            "[--also OTHER_DAEMON] [--sandbox none]\n",
            argv[0]);
        return 2;
    }
    const std::string daemon = fs::absolute(argv[1]).string();
    const std::string agent = fs::absolute(argv[2]).string();
    const std::string board_gen = fs::absolute(argv[3]).string();
    int tickets = 1000, rounds = 5, rss_tickets = 10000;
    std::vector<std::string> daemons{daemon};
    std::string sandbox = "auto";
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const int value = std::atoi(argv[i + 1]);
        if (flag == "--sandbox")
            sandbox = argv[i + 1];
        else if (flag == "--also")
            daemons.push_back(fs::absolute(argv[i + 1]).string());
        else if (flag == "--tickets")
            tickets = value;
        else if (flag == "--rounds")
            rounds = value;
        else if (flag == "--rss-tickets")
            rss_tickets = value;
    }
    const fs::path scratch =
        fs::temp_directory_path() / ("board-daemon-bench-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    const std::string path_env =
        "PATH=" + fs::path(agent).parent_path().string() + ":" + std::getenv("PATH");
    // The daemon's temp folder is not the one that holds the boards, as for a board kept in
    // a repository (a board inside temp makes every run a temp folder of its own).
    const fs::path agent_tmp = scratch / "tmp";
    fs::create_directories(agent_tmp);
    const std::string tmp_env = "TMPDIR=" + agent_tmp.string();

    std::vector<double> bare_s;
    std::vector<double> files_s;
    std::vector<Spent> bare_spent;          ///< the loop's own process, not the agents
    std::vector<Spent> files_spent;         ///< the same, with the board's file work
    std::vector<Spent> bare_agents_spent;   ///< the agents the bare loop started
    std::vector<Spent> files_agents_spent;  ///< and those of the loop with the file work
    std::vector<std::vector<double>> daemon_s(daemons.size());
    std::vector<std::vector<Spent>> daemon_spent(daemons.size());         ///< its own threads only
    std::vector<std::vector<Spent>> daemon_agents_spent(daemons.size());  ///< its agents
    for (int round = 0; round < rounds; ++round) {
        // Bare: the same agent, the same count, 2 at a time. Like the daemon's board, each
        // round's folder is new and its logs exist before the clock starts: the agent's
        // artifact and output are new files in both, as they are for every real run.
        const fs::path bare_dir = scratch / ("bare-" + std::to_string(round));
        fs::create_directories(bare_dir);
        const auto events_of = [&](int i) { return bare_dir / (std::to_string(i) + ".jsonl"); };
        for (int i = 0; i < tickets; ++i)
            std::ofstream(events_of(i)) << R"({"type":"created"})" << '\n';
        auto start = Clock::now();
        Spent self_before = spent_by(RUSAGE_SELF);
        Spent agents_before = spent_by(RUSAGE_CHILDREN);
        std::vector<std::pair<pid_t, int>> flight;  // pid, ticket
        const auto land = [&](pid_t done) {
            append_durably(events_of(landed(flight, done)),
                           R"({"type":"run-finished"})"
                           "\n");
        };
        for (int i = 0; i < tickets; ++i) {
            if (flight.size() == 2) land(::wait(nullptr));
            const std::string n = std::to_string(i);
            append_durably(events_of(i),
                           R"({"type":"run-started"})"
                           "\n");
            flight.emplace_back(spawn({agent},
                                      {"BOARD_ARTIFACT=" + (bare_dir / (n + ".md")).string()},
                                      (bare_dir / (n + ".log")).string()),
                                i);
        }
        while (!flight.empty()) land(::wait(nullptr));
        bare_s.push_back(seconds_since(start));
        bare_spent.push_back(spent_by(RUSAGE_SELF) - self_before);
        bare_agents_spent.push_back(spent_by(RUSAGE_CHILDREN) - agents_before);

        self_before = spent_by(RUSAGE_SELF);
        agents_before = spent_by(RUSAGE_CHILDREN);
        files_s.push_back(
            bare_with_board_files(scratch / ("files-" + std::to_string(round)), agent, tickets));
        files_spent.push_back(spent_by(RUSAGE_SELF) - self_before);
        files_agents_spent.push_back(spent_by(RUSAGE_CHILDREN) - agents_before);
        std::printf(
            "round %d: bare %.3f s, bare + files %.3f s", round + 1, bare_s.back(), files_s.back());
        for (std::size_t k = 0; k < daemons.size(); ++k) {
            const fs::path board =
                scratch / ("board-" + std::to_string(round) + "-" + std::to_string(k));
            make_backlog_board(board, tickets, sandbox);
            start = Clock::now();
            const pid_t d = spawn({daemons[k],
                                   "--board",
                                   board.string(),
                                   "--max-parallel",
                                   "2",
                                   "--log-format",
                                   "json"},
                                  {path_env, tmp_env},
                                  (scratch / "daemon.out").string());
            int code = 0;
            Spent agents;
            daemon_spent[k].push_back(own_spending(d, code, agents));
            daemon_agents_spent[k].push_back(agents);
            daemon_s[k].push_back(seconds_since(start));
            std::ifstream out(scratch / "daemon.out");
            int finished = 0;
            for (std::string line; std::getline(out, line);)
                if (line.find("\"type\":\"run-finished\"") != std::string::npos) ++finished;
            std::printf(", daemon%s %.3f s", k == 0 ? "" : " (also)", daemon_s[k].back());
            if (code != 0 || finished != tickets) {
                std::fprintf(stderr,
                             "\n%s did not take every ticket through research (exit %d, %d runs); "
                             "its board and output are kept in %s\n",
                             daemons[k].c_str(),
                             code,
                             finished,
                             scratch.c_str());
                return 1;
            }
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    const double bare = median(bare_s);
    std::printf("\n%d tickets through research, --max-parallel 2, medians of %d rounds:\n",
                tickets,
                rounds);
    const double files = median(files_s);
    std::printf("  bare loop:             %.3f s (%.0f runs/s)\n", bare, tickets / bare);
    std::printf(
        "  bare loop + the board's file work: %.3f s (%.0f runs/s)\n", files, tickets / files);
    // The board's rules ask this file work of every run: done as the bare loop does its own
    // (one thread, each sync waited for), it alone puts the loop at this share of the bare one.
    std::printf("  the board's file work alone: %.0f%% of the bare loop\n", 100.0 * bare / files);
    // The yardstick for the daemon's own CPU below: what a loop that only launches, and one
    // that also does the board's file work, spend themselves (their children, the agents, not).
    const auto per_run = [&](const std::vector<Spent>& rounds_spent) {
        std::vector<double> cpu, faults;
        for (const Spent& r : rounds_spent) {
            cpu.push_back(r.cpu_s);
            faults.push_back(r.faults);
        }
        return Spent{1e6 * median(cpu) / tickets, median(faults) / tickets};
    };
    const Spent bare_self = per_run(bare_spent), files_self = per_run(files_spent);
    std::printf(
        "    their own CPU: bare %.0f us per run, with the file work %.0f us per run\n"
        "    their own page faults: bare %.1f per run, with the file work %.1f per run\n",
        bare_self.cpu_s,
        files_self.cpu_s,
        bare_self.faults,
        files_self.faults);
    // On two cores the agents' CPU counts as much as the launcher's.
    const Spent bare_agents = per_run(bare_agents_spent),
                files_agents = per_run(files_agents_spent);
    std::printf(
        "    their agents' CPU: bare %.0f us per run, with the file work %.0f us per run\n"
        "    their agents' page faults: bare %.1f per run, with the file work %.1f per run\n",
        bare_agents.cpu_s,
        files_agents.cpu_s,
        bare_agents.faults,
        files_agents.faults);
    for (std::size_t k = 0; k < daemons.size(); ++k) {
        const double dmn = median(daemon_s[k]);
        std::printf(
            "  %s: %.3f s (%.0f runs/s), %.0f%% of the bare loop (goal >= 70%%), %.0f%% of the "
            "bare loop with the board's file work\n",
            daemons[k].c_str(),
            dmn,
            tickets / dmn,
            100.0 * bare / dmn,
            100.0 * files / dmn);
        // What the daemon's own threads spent, disk latency aside: deciding, folding, writing,
        // confining and launching, reading output. Both from one read of its /proc: a round
        // whose read failed gives neither.
        std::vector<Spent> own, agents;
        for (std::size_t r = 0; r < daemon_spent[k].size(); ++r) {
            if (daemon_spent[k][r].cpu_s < 0) continue;
            own.push_back(daemon_spent[k][r]);
            agents.push_back(daemon_agents_spent[k][r]);
        }
        if (own.empty()) continue;
        const Spent own_per_run = per_run(own), agents_per_run = per_run(agents);
        std::printf(
            "    its own CPU (its threads, not the agents'): %.0f us per run, %.1f page "
            "faults per run\n",
            own_per_run.cpu_s,
            own_per_run.faults);
        std::printf(
            "    its agents' CPU (sandbox: %s): %.0f us per run, %.1f page faults per run\n",
            sandbox.c_str(),
            agents_per_run.cpu_s,
            agents_per_run.faults);
    }
    if (rss_tickets <= 0) {  // no memory measurement asked for
        fs::remove_all(scratch);
        return 0;
    }
    // Memory on a big board.
    const fs::path big = scratch / "big";
    fs::remove_all(big);
    const pid_t gen = spawn(
        {board_gen, big.string(), std::to_string(rss_tickets)}, {}, (scratch / "gen.out").string());
    if (wait_for(gen) != 0) {
        std::fprintf(stderr, "board_gen failed; its output is kept in %s\n", scratch.c_str());
        return 1;
    }
    std::ofstream(big / "board.yaml")
        << "prefix: PROJ\n"
           "agents:\n  default: { command: [board_null_agent], timeout: 1m }\n"
           "  implementing: { worktree: false }\n";
    rusage usage{};
    const auto start = Clock::now();
    const pid_t d =
        spawn({daemon, "--board", big.string(), "--timeout", "10s", "--log-format", "json"},
              {path_env},
              (scratch / "big.out").string());
    const int code = wait_for(d, &usage);
    std::printf(
        "\n%d-ticket board (board_gen, ~20 events each), daemon working it for %.1f s (exit %d):\n",
        rss_tickets,
        seconds_since(start),
        code);
    std::printf("  peak RSS %.1f MB (goal <= 50 MB)\n",
                static_cast<double>(usage.ru_maxrss) / 1024.0);
    fs::remove_all(scratch);
    return 0;
}
