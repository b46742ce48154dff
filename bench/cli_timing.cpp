// board_cli_timing: runs one command line N times as a whole process (fork + exec + wait, the
// way a user or an agent pays for it) and prints the median and spread of the wall time, and
// the median CPU time (user + sys) of the child.
//
//   board_cli_timing RUNS LABEL -- PROGRAM ARGS... [:: LABEL -- PROGRAM ARGS...]...
//
// With several commands (separated by a lone `::`) the runs are interleaved, one of each in
// turn, so that a machine whose speed drifts over seconds (this VM's does, by up to 50%)
// slows them all alike: compare their medians as ratios.
//
// stdout of the program goes to /dev/null. Exits non-zero if any run fails.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double percentile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(i, values.size() - 1)];
}

double millis(const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
}

struct Command {
    std::string label;
    std::vector<char*> argv;  ///< null-terminated
    std::vector<double> wall, cpu;
};

/// Runs `command` once; false (and a message) if it could not run or failed.
bool run_once(Command& command, int run) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    if (child < 0) return false;
    if (child == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execv(command.argv[0], command.argv.data());
        ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    ::wait4(child, &status, 0, &usage);
    const auto end = std::chrono::steady_clock::now();
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        std::fprintf(stderr, "%s: run %d failed (status %d)\n", command.label.c_str(), run, status);
        return false;
    }
    command.wall.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    command.cpu.push_back(millis(usage.ru_utime) + millis(usage.ru_stime));
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage =
        "usage: board_cli_timing RUNS LABEL -- PROGRAM ARGS... [:: LABEL -- PROGRAM ARGS...]...\n";
    if (argc < 5) {
        std::fputs(usage, stderr);
        return 2;
    }
    const int runs = std::atoi(argv[1]);
    if (runs < 1) return 2;
    std::vector<Command> commands;
    for (int i = 2; i < argc;) {
        if (i + 2 >= argc || std::string{argv[i + 1]} != "--") {
            std::fputs(usage, stderr);
            return 2;
        }
        Command command;
        command.label = argv[i];
        i += 2;
        for (; i < argc && std::string{argv[i]} != "::"; ++i) command.argv.push_back(argv[i]);
        if (command.argv.empty()) {
            std::fputs(usage, stderr);
            return 2;
        }
        command.argv.push_back(nullptr);
        if (i < argc) ++i;  // the `::`
        commands.push_back(std::move(command));
    }
    for (int r = 0; r < runs; ++r)
        for (auto& command : commands)
            if (!run_once(command, r)) return 1;
    for (const auto& command : commands)
        std::printf(
            "%-34s median %7.2f ms   p10 %7.2f   p90 %7.2f   cpu median %7.2f ms   (%d runs)\n",
            command.label.c_str(),
            median(command.wall),
            percentile(command.wall, 0.1),
            percentile(command.wall, 0.9),
            median(command.cpu),
            runs);
    return 0;
}
