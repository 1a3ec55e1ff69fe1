# install.ps1: download, verify and install velesdb-hooks on Windows (docs/contract.md §11).
#
#   irm https://github.com/<owner>/velesdb-hooks/releases/latest/download/install.ps1 | iex
#   & ([scriptblock]::Create((irm …/install.ps1))) -Version v0.1.0 -Client claude -AddToPath
#   & ([scriptblock]::Create((irm …/install.ps1))) -Uninstall
#
# What it does, in order, stopping at the first problem with nothing changed:
#   1. download SHA256SUMS and the Windows archive (velesdb-hooks-<version>-windows-x64.zip)
#      of the release (latest, or the one named by -Version), over https only, and refuse the
#      archive unless its SHA-256 (Get-FileHash) matches the listed one;
#   2. extract it into a private temporary directory and refuse the binary unless its
#      `--version` prints the expected version, so a binary that cannot run here never
#      replaces one that can;
#   3. run its `install [--client C]`: it copies itself to its stable path
#      ($env:VELESDB_HOOKS_HOME\bin\velesdb-hooks.exe, default ~\.velesdb-hooks\bin\) and
#      registers the hooks with each agent;
#   4. add that bin directory to the user's PATH only with -AddToPath; otherwise say how.
# Every step is safe to repeat: a re-run with the same release changes nothing.
#
# Everything lives in functions and the only command is the call on the last line, so a
# download cut short defines at most some functions and runs nothing (PowerShell parses the
# whole text first: a cut inside a function is a parse error). That call ends with
# -EndOfScript, without which the function does nothing, so a cut inside the last line never
# runs with some of its arguments lost. Errors never `exit` a session that ran this through
# `iex`: they are thrown there, and become exit code 1 only when the script runs as a file
# (powershell -File install.ps1).
#
# Environment:
#   VELESDB_HOOKS_DOWNLOAD_URL  base URL holding SHA256SUMS and the archives directly (a
#                               mirror, or a test server); replaces the GitHub release URL
#   VELESDB_HOOKS_REPO          owner/name of the GitHub repository (default: $DefaultRepo)
#   VELESDB_HOOKS_GITHUB        GitHub's base URL (default https://github.com; for Enterprise)
#   VELESDB_HOOKS_HOME          velesdb-hooks' own directory (default ~\.velesdb-hooks)
# Plain http:// is accepted only for 127.0.0.1, localhost and [::1].

param(
    [string] $Version = "",
    [string[]] $Client = @(),
    [switch] $Uninstall,
    [switch] $AddToPath
)

function Get-DefaultRepo {
    # The release workflow writes the real owner/name on the next line when it uploads the
    # script; a copy taken from the source tree keeps the placeholder and then needs
    # VELESDB_HOOKS_REPO or VELESDB_HOOKS_DOWNLOAD_URL.
    $DefaultRepo = "OWNER/velesdb-hooks"
    return $DefaultRepo
}

function Write-Step([string] $Message) {
    Write-Host "velesdb-hooks: $Message"
}

# Stop "message": every refusal goes through here, so each one reads the same.
function Stop-Install([string] $Message) {
    throw "velesdb-hooks install.ps1: error: $Message"
}

# ---------------------------------------------------------------------------------------
# Arguments and locations

function Test-Arguments([string] $Version, [string[]] $Client, [bool] $Uninstall) {
    if ($Version -ne "" -and $Version -notmatch '^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$') {
        Stop-Install "-Version takes a release such as v0.1.0 (got `"$Version`")"
    }
    if ($Uninstall -and $Version -ne "") {
        Stop-Install "-Uninstall does not take -Version"
    }
    foreach ($name in $Client) {
        if ($name -cnotmatch '^[a-z]+$') {
            Stop-Install "-Client takes an agent name (claude, codex, ...) or all (got `"$name`")"
        }
    }
}

function Get-ClientArguments([string[]] $Client) {
    $arguments = @()
    foreach ($name in $Client) { $arguments += @("--client", $name) }
    return , $arguments
}

# Get-StableBinary → the path `velesdb-hooks.exe install` copies itself to (docs/contract.md §9).
function Get-StableBinary {
    $tree = $env:VELESDB_HOOKS_HOME
    if ([string]::IsNullOrEmpty($tree)) {
        $tree = Join-Path $HOME ".velesdb-hooks"
    } elseif (-not [IO.Path]::IsPathRooted($tree)) {
        Stop-Install "VELESDB_HOOKS_HOME must be an absolute path (it is `"$tree`")"
    }
    return Join-Path (Join-Path $tree "bin") "velesdb-hooks.exe"
}

# Get-ReleaseBase "0.1.0" → the URL SHA256SUMS and the archives are fetched from.
function Get-ReleaseBase([string] $Version) {
    if (-not [string]::IsNullOrEmpty($env:VELESDB_HOOKS_DOWNLOAD_URL)) {
        return $env:VELESDB_HOOKS_DOWNLOAD_URL.TrimEnd("/")
    }
    $repo = $env:VELESDB_HOOKS_REPO
    if ([string]::IsNullOrEmpty($repo)) { $repo = Get-DefaultRepo }
    if ($repo.StartsWith("OWNER/")) {
        Stop-Install "this copy of install.ps1 does not name its GitHub repository; set `$env:VELESDB_HOOKS_REPO = `"owner/velesdb-hooks`" (or VELESDB_HOOKS_DOWNLOAD_URL)"
    }
    if ($repo -notmatch '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$') {
        Stop-Install "VELESDB_HOOKS_REPO must be owner/name (it is `"$repo`")"
    }
    $github = $env:VELESDB_HOOKS_GITHUB
    if ([string]::IsNullOrEmpty($github)) { $github = "https://github.com" }
    if ($Version -ne "") {
        return "$($github.TrimEnd('/'))/$repo/releases/download/v$Version"
    }
    return "$($github.TrimEnd('/'))/$repo/releases/latest/download"
}

# ---------------------------------------------------------------------------------------
# Downloads and checksums

# Assert-SecureUrl URL: https anywhere; plain http only to this machine (mirrors in tests).
function Assert-SecureUrl([string] $Url) {
    if ($Url -match '^https://') { return }
    if ($Url -match '^http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]+)?/') { return }
    Stop-Install "refusing to download from ${Url}: use an https:// URL"
}

function Get-Download([string] $Url, [string] $OutFile) {
    Assert-SecureUrl $Url
    try {
        # -UseBasicParsing: Windows PowerShell 5.1 otherwise needs Internet Explorer's engine.
        Invoke-WebRequest -Uri $Url -OutFile $OutFile -UseBasicParsing -MaximumRedirection 10
    } catch {
        Stop-Install "could not download ${Url} ($($_.Exception.Message)); nothing was installed"
    }
}

# Find-Asset SUMS_FILE VERSION → @{ Name; Sha256; Version } of the one Windows archive listed;
# VERSION empty means any version. Accepts sha256sum's text ("  name") and binary (" *name") lines.
function Find-Asset([string] $SumsFile, [string] $Version, [string] $Base) {
    $found = @()
    foreach ($line in Get-Content -LiteralPath $SumsFile) {
        if ($line -notmatch '^([0-9A-Fa-f]{64}) [ *](velesdb-hooks-([0-9][0-9A-Za-z.-]*)-windows-x64\.zip)$') { continue }
        if ($Version -ne "" -and $Matches[3] -ne $Version) { continue }
        $found += , @{ Sha256 = $Matches[1].ToLowerInvariant(); Name = $Matches[2]; Version = $Matches[3] }
    }
    if ($found.Count -eq 0) {
        $which = if ($Version -ne "") { " $Version" } else { "" }
        Stop-Install "the release has no velesdb-hooks$which for windows-x64 (SHA256SUMS at $Base lists none); nothing was installed"
    }
    if ($found.Count -gt 1) {
        Stop-Install "SHA256SUMS at $Base lists $($found.Count) windows-x64 archives; pick one with -Version; nothing was installed"
    }
    return $found[0]
}

function Assert-Checksum([string] $File, [string] $Expected, [string] $Name) {
    $actual = (Get-FileHash -LiteralPath $File -Algorithm SHA256).Hash.ToLowerInvariant()
    if ($actual -cne $Expected) {
        Stop-Install "checksum mismatch for $Name (expected $Expected, got $actual): the download is corrupt or was tampered with; nothing was installed"
    }
    Write-Step "checksum verified: $Name"
}

# Expand-Binary ZIP DIR → the path of velesdb-hooks.exe, the archive's one entry, extracted into DIR.
function Expand-Binary([string] $Archive, [string] $Directory, [string] $Name) {
    try {
        Expand-Archive -LiteralPath $Archive -DestinationPath $Directory -Force
    } catch {
        Stop-Install "could not extract ${Name} ($($_.Exception.Message)); nothing was installed"
    }
    $entries = @(Get-ChildItem -LiteralPath $Directory -Force)
    $binary = Join-Path $Directory "velesdb-hooks.exe"
    if ($entries.Count -ne 1 -or -not (Test-Path -LiteralPath $binary -PathType Leaf)) {
        Stop-Install "$Name does not hold exactly velesdb-hooks.exe; nothing was installed"
    }
    return $binary
}

# Invoke-Native PROGRAM ARGUMENTS → its exit code, its output shown as it comes.
function Invoke-Native([string] $Program, [string[]] $Arguments) {
    # Windows PowerShell 5.1 may turn a native program's stderr lines into error records,
    # which "Stop" would make fatal; the exit code is what says whether it worked.
    $ErrorActionPreference = "Continue"
    & $Program @Arguments | Out-Host
    return $LASTEXITCODE
}

function Assert-Runs([string] $Binary, [string] $Version, [string] $Name) {
    $ErrorActionPreference = "Continue" # as in Invoke-Native: the exit code decides
    $output = ""
    $status = 0
    try {
        $output = (& $Binary --version 2>&1 | Out-String).Trim()
        $status = $LASTEXITCODE
    } catch {
        $output = $_.Exception.Message
        $status = -1
    }
    if ($status -ne 0 -or $output -cne "velesdb-hooks $Version") {
        $first = ($output -split "`n")[0]
        Stop-Install "the binary in $Name does not run here (--version exited ${status}: $first); nothing was installed"
    }
}

# ---------------------------------------------------------------------------------------
# PATH

# The user PATH is HKCU\Environment's Path value, usually REG_EXPAND_SZ holding %VARIABLES%.
# [Environment]::SetEnvironmentVariable would write it back expanded and as REG_SZ, changing
# every entry of the user's; so it is read and written raw here, keeping its kind.

# Get-UserPath → the user PATH as stored, %VARIABLES% unexpanded ("" when there is none).
function Get-UserPath {
    $key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey("Environment")
    if ($null -eq $key) { return "" }
    try {
        return [string] $key.GetValue("Path", "", [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
    } finally {
        $key.Close()
    }
}

function Set-UserPath([string] $Value) {
    $key = [Microsoft.Win32.Registry]::CurrentUser.CreateSubKey("Environment")
    try {
        $kind = [Microsoft.Win32.RegistryValueKind]::ExpandString
        if ($key.GetValueNames() -contains "Path") { $kind = $key.GetValueKind("Path") }
        $key.SetValue("Path", $Value, $kind)
    } finally {
        $key.Close()
    }
    # A registry write alone is not announced: setting and removing a variable through .NET
    # broadcasts the change, so terminals started afterwards read the new PATH.
    [Environment]::SetEnvironmentVariable("VELESDB_HOOKS_PATH_CHANGED", "1", "User")
    [Environment]::SetEnvironmentVariable("VELESDB_HOOKS_PATH_CHANGED", $null, "User")
}

# Test-SameDirectory ENTRY DIR: ENTRY (possibly %VARIABLE%-based, with a trailing \) names DIR.
function Test-SameDirectory([string] $Entry, [string] $Directory) {
    return [Environment]::ExpandEnvironmentVariables($Entry).TrimEnd("\") -eq $Directory.TrimEnd("\")
}

function Test-OnPath([string] $PathValue, [string] $Directory) {
    foreach ($entry in ($PathValue -split ";")) {
        if (Test-SameDirectory $entry $Directory) { return $true }
    }
    return $false
}

function Add-UserPath([string] $Directory) {
    $current = Get-UserPath
    if (Test-OnPath $current $Directory) {
        Write-Step "PATH: $Directory is already on your user PATH"
        return
    }
    $updated = if ($current -eq "") { $Directory } else { "$($current.TrimEnd(';'));$Directory" }
    Set-UserPath $updated
    $env:Path = "$env:Path;$Directory"
    Write-Step "PATH: added $Directory to your user PATH (new terminals see it)"
}

function Remove-UserPath([string] $Directory) {
    $current = Get-UserPath
    if (-not (Test-OnPath $current $Directory)) { return }
    $kept = @($current -split ";" | Where-Object { $_ -ne "" -and -not (Test-SameDirectory $_ $Directory) })
    Set-UserPath ($kept -join ";")
    Write-Step "PATH: removed $Directory from your user PATH"
}

# ---------------------------------------------------------------------------------------
# Install and uninstall

function Install-VelesdbHooks([string] $Version, [string[]] $Client, [bool] $AddToPath) {
    $stable = Get-StableBinary
    $base = Get-ReleaseBase $Version
    $tmp = Join-Path ([IO.Path]::GetTempPath()) ("velesdb-hooks-install-" + [Guid]::NewGuid().ToString("N"))
    New-Item -ItemType Directory -Path $tmp | Out-Null
    try {
        Write-Step "fetching $base/SHA256SUMS"
        $sums = Join-Path $tmp "SHA256SUMS"
        Get-Download "$base/SHA256SUMS" $sums
        $asset = Find-Asset $sums $Version $base

        Write-Step "fetching $base/$($asset.Name)"
        $archive = Join-Path $tmp $asset.Name
        Get-Download "$base/$($asset.Name)" $archive
        Assert-Checksum $archive $asset.Sha256 $asset.Name

        $binary = Expand-Binary $archive (Join-Path $tmp "extracted") $asset.Name
        Assert-Runs $binary $asset.Version $asset.Name

        $arguments = Get-ClientArguments $Client
        Write-Step ("running: velesdb-hooks.exe install " + ($arguments -join " ")).TrimEnd()
        $status = Invoke-Native $binary (@("install") + $arguments)
        if ($status -ne 0) { Stop-Install "velesdb-hooks.exe install failed (exit $status, see above)" }
        if (-not (Test-Path -LiteralPath $stable -PathType Leaf)) {
            Stop-Install "velesdb-hooks.exe install did not leave a binary at $stable"
        }
    } finally {
        Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
    }

    $binDir = Split-Path -Parent $stable
    if ($AddToPath) {
        Add-UserPath $binDir
    } elseif (-not (Test-OnPath (Get-UserPath) $binDir)) {
        Write-Step "$binDir is not on your PATH; run this again with -AddToPath, or call $stable by its full path"
    }
    Write-Step "installed velesdb-hooks $($asset.Version)"
}

function Uninstall-VelesdbHooks([string[]] $Client) {
    $stable = Get-StableBinary
    if (Test-Path -LiteralPath $stable -PathType Leaf) {
        $arguments = Get-ClientArguments $Client
        Write-Step ("running: velesdb-hooks.exe uninstall " + ($arguments -join " ")).TrimEnd()
        $status = Invoke-Native $stable (@("uninstall") + $arguments)
        if ($status -ne 0) { Stop-Install "velesdb-hooks.exe uninstall failed (exit $status, see above)" }
    } else {
        Write-Step "no binary at $stable; no agent entries could be removed by it"
    }
    # The PATH entry goes with the binary: `-Uninstall -Client claude` keeps the binary while
    # another agent still uses it, and then the entry stays too.
    if (-not (Test-Path -LiteralPath $stable)) {
        Remove-UserPath (Split-Path -Parent $stable)
    }
}

function Invoke-VelesdbHooksInstaller([string] $Version, [string[]] $Client, [bool] $Uninstall, [bool] $AddToPath, [switch] $EndOfScript) {
    if (-not $EndOfScript) { return } # the script's last line was cut short
    # Preferences set here are local to this function: the caller's session keeps its own.
    $ErrorActionPreference = "Stop"
    $ProgressPreference = "SilentlyContinue" # the progress bar makes Windows PowerShell 5.1 downloads many times slower
    $ranAsFile = -not [string]::IsNullOrEmpty($PSCommandPath)
    try {
        if ([Environment]::OSVersion.Platform -ne [PlatformID]::Win32NT) {
            Stop-Install "install.ps1 is for Windows; on Linux and macOS use install.sh from the same release"
        }
        # Windows PowerShell 5.1 may still offer TLS 1.0 first; ask for 1.2 (and 1.3 where known).
        $protocols = [Net.SecurityProtocolType]::Tls12
        if ([Enum]::GetNames([Net.SecurityProtocolType]) -contains "Tls13") { $protocols = $protocols -bor [Net.SecurityProtocolType]::Tls13 }
        [Net.ServicePointManager]::SecurityProtocol = $protocols

        Test-Arguments $Version $Client $Uninstall
        if ($Uninstall) {
            Uninstall-VelesdbHooks $Client
        } else {
            Install-VelesdbHooks $Version.TrimStart("v") $Client $AddToPath
        }
    } catch {
        if (-not $ranAsFile) { throw }
        [Console]::Error.WriteLine($_.Exception.Message)
        exit 1
    }
}

Invoke-VelesdbHooksInstaller -Version $Version -Client $Client -Uninstall $Uninstall.IsPresent -AddToPath $AddToPath.IsPresent -EndOfScript
