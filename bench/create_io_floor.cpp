// The least a durable `board create` can cost on this machine: a static program that does
// only the file-system work spec/storage.md asks of a create, with nothing else in it (no
// board.yaml, no JSON, no id scan), to be timed as a whole process beside `board create`:
//
//   board_cli_timing 21 floor -- board_create_io_floor TICKETS_DIR
//
// Per run: mkdir a fresh ticket folder and fsync tickets/ (the id is claimed durably), create
// events.jsonl and fsync its folder (the file exists after a crash), write one event line and
// fdatasync it (the event is durable). (No ticket.json: it is a cache, which `board create`
// leaves to the first reader since 2026-11-24; before, this program wrote one too.)

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

int fail(const char* what, const std::string& path) {
    std::fprintf(
        stderr, "board_create_io_floor: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: board_create_io_floor TICKETS_DIR\n");
        return 2;
    }
    const std::string tickets = argv[1];
    const int tickets_fd = ::open(tickets.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tickets_fd < 0) return fail("open", tickets);
    // A name no board would use, unique per run.
    std::string name = "FLOOR-" + std::to_string(::getpid());
    for (int n = 0; ::mkdirat(tickets_fd, name.c_str(), 0777) != 0; ++n) {
        if (errno != EEXIST || n > 1000) return fail("mkdir", tickets + "/" + name);
        name = "FLOOR-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    }
    if (::fsync(tickets_fd) != 0) return fail("fsync", tickets);
    const std::string dir = tickets + "/" + name;
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return fail("open", dir);
    const int log =
        ::openat(dir_fd, "events.jsonl", O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (log < 0) return fail("create", dir + "/events.jsonl");
    if (::fsync(dir_fd) != 0) return fail("fsync", dir);
    const std::string line(263, 'x');
    const std::string event = line + "\n";  // the size of a typical `created` line
    if (::write(log, event.data(), event.size()) != static_cast<ssize_t>(event.size()))
        return fail("write", dir + "/events.jsonl");
    if (::fdatasync(log) != 0) return fail("fdatasync", dir + "/events.jsonl");
    ::close(log);
    ::close(dir_fd);
    ::close(tickets_fd);
    return 0;
}
