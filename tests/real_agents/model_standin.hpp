#pragma once
// A model service for the real agent CLIs to talk to, on loopback, in the test's process:
// the Anthropic Messages API (Claude Code) and the OpenAI Responses API (Codex), streamed as
// both CLIs expect. In `agent` mode it plays a competent agent: the first turn of a phase
// writes the artifact the prompt asks for (a Write tool call for Claude, an exec_command for
// Codex), and once the tool's result comes back it ends with <promise>COMPLETE</promise>.
// Every request body is kept, so a test can check what the model was told.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace board::testing {

class ModelStandin {
public:
    enum class Mode {
        agent,         ///< as above
        unauthorized,  ///< every request: 401 with the API's error body
    };

    explicit ModelStandin(Mode mode = Mode::agent);
    ~ModelStandin();
    ModelStandin(const ModelStandin&) = delete;
    ModelStandin& operator=(const ModelStandin&) = delete;

    unsigned short port() const { return port_; }

    /// The bodies of every POST so far, in arrival order.
    std::vector<std::string> requests() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    unsigned short port_ = 0;
};

/// A loopback port that refuses connections (nothing listens there).
unsigned short refusing_port();

}  // namespace board::testing
