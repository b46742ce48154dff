// board_cli_timing: runs one command line N times as a whole process (fork + exec + wait, the
// way a user or an agent pays for it) and prints the median and spread of the wall time, and
// the median CPU time (user + sys) of the child.
//
//   board_cli_timing RUNS LABEL -- PROGRAM ARGS...
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

}  // namespace

int main(int argc, char** argv) {
    int separator = 0;
    for (int i = 1; i < argc; ++i)
        if (std::string{argv[i]} == "--") separator = i;
    if (argc < 5 || separator != 3) {
        std::fputs("usage: board_cli_timing RUNS LABEL -- PROGRAM ARGS...\n", stderr);
        return 2;
    }
    const int runs = std::atoi(argv[1]);
    const std::string label = argv[2];
    if (runs < 1) return 2;
    std::vector<double> wall, cpu;
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const pid_t child = ::fork();
        if (child < 0) return 3;
        if (child == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::execv(argv[separator + 1], argv + separator + 1);
            ::_exit(127);
        }
        int status = 0;
        rusage usage{};
        ::wait4(child, &status, 0, &usage);
        const auto end = std::chrono::steady_clock::now();
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
            std::fprintf(stderr, "%s: run %d failed (status %d)\n", label.c_str(), r, status);
            return 1;
        }
        wall.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        cpu.push_back(millis(usage.ru_utime) + millis(usage.ru_stime));
    }
    std::printf("%-34s median %7.2f ms   p10 %7.2f   p90 %7.2f   cpu median %7.2f ms   (%d runs)\n",
                label.c_str(),
                median(wall),
                percentile(wall, 0.1),
                percentile(wall, 0.9),
                median(cpu),
                runs);
    return 0;
}
