/*
 * launch.exe: start one command the way a Windows host does, with the environment it sets.
 *
 *   launch.exe [--env NAME=VALUE]... [--unset NAME]... [--cwd DIR] --command-line LINE
 *
 * Why it exists: Wine rebuilds USERPROFILE, TEMP and TMP from its registry when it starts a
 * program, so values exported on Linux never reach the .exe; set here, inside Windows, they
 * reach the child exactly as a host's would. LINE goes to CreateProcessW verbatim (the host's
 * own quoting is what is under test), standard handles are inherited (the test pipes the
 * payload into stdin, as hosts do), and the child's exit code is ours. 125: launch failed.
 */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>

static int fail(const wchar_t *what, DWORD error) {
  fwprintf(stderr, L"launch: %ls (Windows error %lu)\n", what, (unsigned long)error);
  return 125;
}

int wmain(int argc, wchar_t **argv) {
  const wchar_t *cwd = NULL;
  wchar_t *line = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) return fail(L"every option needs a value", 0);
    const wchar_t *option = argv[i];
    wchar_t *value = argv[++i];
    if (wcscmp(option, L"--env") == 0) {
      wchar_t *equals = wcschr(value, L'=');
      if (equals == NULL || equals == value) return fail(L"--env needs NAME=VALUE", 0);
      *equals = L'\0';
      if (!SetEnvironmentVariableW(value, equals + 1)) return fail(L"SetEnvironmentVariableW failed", GetLastError());
    } else if (wcscmp(option, L"--unset") == 0) {
      SetEnvironmentVariableW(value, NULL);
    } else if (wcscmp(option, L"--cwd") == 0) {
      cwd = value;
    } else if (wcscmp(option, L"--command-line") == 0) {
      line = value; /* CreateProcessW may write into it: argv strings are writable. */
    } else {
      return fail(L"unknown option", 0);
    }
  }
  if (line == NULL) return fail(L"--command-line is required", 0);

  STARTUPINFOW startup = {0};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  HANDLE standard[3] = {startup.hStdInput, startup.hStdOutput, startup.hStdError};
  for (int i = 0; i < 3; i++) SetHandleInformation(standard[i], HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);

  PROCESS_INFORMATION child;
  if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, 0, NULL, cwd, &startup, &child)) {
    return fail(L"CreateProcessW failed", GetLastError());
  }
  WaitForSingleObject(child.hProcess, INFINITE);
  DWORD code = 125;
  GetExitCodeProcess(child.hProcess, &code);
  return (int)code;
}
