// The least a board-wide query can cost on this machine without a daemon: a static program
// that does only the file-system work every `list`/`ready`/`next` must do to keep the promise
// that no cache is believed over its log (list tickets/, stat each ticket's events.jsonl),
// with nothing else in it (no index, no parse, no JSON), to be timed as a whole process beside
// the query:
//
//   board_cli_timing 21 floor -- board_query_io_floor TICKETS_DIR
//
// tickets/ is listed first, then the stats are split between two threads, the most this
// 2-core machine allows (`board` stats on one thread while another parses the index and a
// third lists). Exits 2 when the folder cannot be read or holds no log, so that a wrong path
// is a failed run to board_cli_timing, not a fast one.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/// How many of `names[from, to)` have a log (so the work cannot be optimised away).
std::size_t stat_logs(int tickets_fd,
                      const std::vector<std::string>& names,
                      std::size_t from,
                      std::size_t to) {
    std::size_t found = 0;
    std::string path;
    for (std::size_t i = from; i < to; ++i) {
        path.assign(names[i]);
        path += "/events.jsonl";

        struct stat st {};

        if (::fstatat(tickets_fd, path.c_str(), &st, 0) == 0) ++found;
    }
    return found;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: board_query_io_floor TICKETS_DIR\n");
        return 2;
    }
    DIR* dir = ::opendir(argv[1]);
    if (!dir) {
        std::fprintf(stderr, "board_query_io_floor: %s: %s\n", argv[1], std::strerror(errno));
        return 2;
    }
    std::vector<std::string> names;
    while (const dirent* item = ::readdir(dir)) {
        if (item->d_name[0] != '.') names.emplace_back(item->d_name);
    }
    const int tickets_fd = ::dirfd(dir);
    const std::size_t half = names.size() / 2;
    std::size_t found_second = 0;
    std::thread second([&] { found_second = stat_logs(tickets_fd, names, half, names.size()); });
    // Two statements: in one expression the join may be evaluated first, which would leave the
    // second thread to work alone.
    std::size_t found = stat_logs(tickets_fd, names, 0, half);
    second.join();
    found += found_second;
    ::closedir(dir);
    std::printf("%zu logs\n", found);
    if (found == 0) std::fprintf(stderr, "board_query_io_floor: %s holds no log\n", argv[1]);
    return found > 0 ? 0 : 2;
}
