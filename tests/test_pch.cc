// The owner of the precompiled header every gtest binary reuses (tests/CMakeLists.txt): built so
// that the header is compiled once with the tests' flags; it is not a test and does nothing.
int main() { return 0; }
