// The host of the suites' precompiled header (tests/CMakeLists.txt: gvirtus_test_pch): a program
// compiled with exactly the suites' flags so that each suite can reuse its header. It has no
// tests of its own; GoogleTest's main runs none.
