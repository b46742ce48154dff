#pragma once
// board-daemon answering board-wide queries (`list`, `ready`, `next` with --json) on the Unix
// socket `.board/query.sock` (app::ask_daemon is the other end). One JSON line in, the answer
// out, then the connection closes. Only reads: nothing sent here can write to the board. The
// socket is the owner's alone (mode 0600), as the board's files are.

#include <board/app.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace board::orchestrator {

class QueryServer {
public:
    /// `answer` runs on the io_context's thread, one query at a time.
    using Answer = std::function<app::QueryAnswer(const app::BoardQuery&)>;

    QueryServer(boost::asio::io_context& io, std::filesystem::path socket_path, Answer answer);
    ~QueryServer();
    QueryServer(const QueryServer&) = delete;
    QueryServer& operator=(const QueryServer&) = delete;

    /// Binds the socket (replacing one a dead daemon left: the caller holds the board's lock)
    /// and starts accepting. The reason when it cannot; the daemon then runs without it.
    std::optional<std::string> start();
    /// Stops accepting and removes the socket.
    void stop();

private:
    boost::asio::awaitable<void> accept_loop();
    boost::asio::awaitable<void> serve(boost::asio::local::stream_protocol::socket socket);

    boost::asio::io_context& io_;
    std::filesystem::path path_;
    Answer answer_;
    boost::asio::local::stream_protocol::acceptor acceptor_;
    bool started_ = false;
};

}  // namespace board::orchestrator
