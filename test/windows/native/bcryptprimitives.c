/*
 * bcryptprimitives.dll for Wine 8: Bun's Windows runtime imports ProcessPrng from this DLL
 * (Windows 10 and later have it) and Wine 8 has no such DLL, so without it the .exe does not
 * start at all. ProcessPrng fills a buffer from the system RNG and cannot fail on Windows;
 * advapi32's SystemFunction036 (RtlGenRandom) is the same service under its older name.
 * Built by test/windows/support/wine.ts into the test's private Wine prefix only.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  /* SystemFunction036 takes a 32-bit length; ProcessPrng a SIZE_T one. */
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
