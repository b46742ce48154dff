#pragma once
// A value or the reason there is none: the one result type of board's fallible calls (what
// std::expected will be once the project moves to C++23). Each layer names its own error:
// the reducer's Rejection, the codec's CodecError, board.yaml's ConfigError, the application
// layer's Refusal. Standard library only, so the reducer can use it.

#include <utility>
#include <variant>

namespace board {

template <class T, class E>
class [[nodiscard]] Expected {
public:
    Expected(T&& value)
        : outcome_(std::in_place_index<0>, std::move(value)) {
    }  // NOLINT(google-explicit-constructor)

    Expected(const T& value)
        : outcome_(std::in_place_index<0>, value) {}  // NOLINT(google-explicit-constructor)

    Expected(E&& error)
        : outcome_(std::in_place_index<1>, std::move(error)) {
    }  // NOLINT(google-explicit-constructor)

    Expected(const E& error)
        : outcome_(std::in_place_index<1>, error) {}  // NOLINT(google-explicit-constructor)

    bool has_value() const noexcept { return outcome_.index() == 0; }

    explicit operator bool() const noexcept { return has_value(); }

    /// Precondition: has_value().
    T& value() & { return *std::get_if<0>(&outcome_); }

    const T& value() const& { return *std::get_if<0>(&outcome_); }

    T&& value() && { return std::move(*std::get_if<0>(&outcome_)); }

    /// Precondition: !has_value().
    const E& error() const& { return *std::get_if<1>(&outcome_); }

    E&& error() && { return std::move(*std::get_if<1>(&outcome_)); }

private:
    std::variant<T, E> outcome_;
};

}  // namespace board
