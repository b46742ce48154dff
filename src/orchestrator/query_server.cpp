#include "orchestrator/query_server.hpp"

#include <board/board_dir.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <sys/stat.h>
#include <sys/un.h>

namespace board::orchestrator {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

/// A query is one short line; anything longer is not one.
constexpr std::size_t max_query_bytes = 64 * 1024;

}  // namespace

QueryServer::QueryServer(asio::io_context& io, std::filesystem::path socket_path, Answer answer)
    : io_(io)
    , path_(std::move(socket_path))
    , answer_(std::move(answer))
    , acceptor_(io) {}

QueryServer::~QueryServer() {
    stop();
}

std::optional<std::string> QueryServer::start() {
    if (path_.string().size() >= sizeof(sockaddr_un{}.sun_path))
        return "its path is too long for a socket (" + path_.string() + ")";
    // The socket's folder is the board's private one: refused when others may write it.
    if (const auto folder = private_folder(path_.parent_path().parent_path()); !folder)
        return folder.error().message;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    boost::system::error_code error;
    acceptor_.open(local{}, error);
    if (!error) acceptor_.bind(local::endpoint{path_.string()}, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    // Last, in the private folder: the mode change is the socket's last event, so whoever
    // waits on the folder for it finds it listening.
    if (!error) ::chmod(path_.c_str(), 0600);
    if (error) return path_.string() + ": " + error.message();
    started_ = true;
    asio::co_spawn(io_, accept_loop(), asio::detached);
    return std::nullopt;
}

void QueryServer::stop() {
    if (!started_) return;
    started_ = false;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
}

asio::awaitable<void> QueryServer::accept_loop() {
    while (started_) {
        auto [error, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
        if (error) co_return;
        asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
}

asio::awaitable<void> QueryServer::serve(local::socket socket) {
    // A client that never finishes its line is cut after a while, not kept forever.
    asio::steady_timer deadline{io_, std::chrono::seconds{5}};
    deadline.async_wait([&socket](const boost::system::error_code& ec) {
        if (!ec) {
            boost::system::error_code ignored;
            socket.close(ignored);
        }
    });
    std::string request;
    auto buffer = asio::dynamic_buffer(request, max_query_bytes);
    auto [read_error, n] =
        co_await asio::async_read(socket, buffer, asio::as_tuple(asio::use_awaitable));
    (void)n;
    deadline.cancel();
    // EOF ends the line; a longer one is refused below like any other malformed query.
    if (read_error && read_error != asio::error::eof) co_return;
    app::QueryAnswer answer;
    if (auto query = app::decode_query(request)) {
        answer = answer_(*query);
    } else {
        answer.exit_code = 2;
        answer.message = "board-daemon: not a query";
    }
    // The header, then the output as it is: a big board's list is not copied once more.
    const std::string header = app::answer_header(answer);
    const std::array<asio::const_buffer, 2> reply{asio::buffer(header),
                                                  asio::buffer(answer.output)};
    co_await asio::async_write(socket, reply, asio::as_tuple(asio::use_awaitable));
}

}  // namespace board::orchestrator
