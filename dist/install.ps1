# Installs a session-doctor release binary on Windows: downloads the archive
# for this machine from the release, checks it against its published SHA-256
# sum, and puts session-doctor.exe in the install folder. Works once a release
# is published (none is yet).
#
#   powershell -ExecutionPolicy Bypass -c "irm https://github.com/session-doctor/session-doctor/releases/latest/download/session-doctor-installer.ps1 | iex"
#
# Environment (all optional): SESSION_DOCTOR_VERSION (a version or "latest"),
# SESSION_DOCTOR_INSTALL_DIR (default %LOCALAPPDATA%\session-doctor\bin),
# SESSION_DOCTOR_BASE_URL (where the archives are).
$ErrorActionPreference = 'Stop'
$repo = 'https://github.com/session-doctor/session-doctor'
$version = if ($env:SESSION_DOCTOR_VERSION) { $env:SESSION_DOCTOR_VERSION } else { 'latest' }
$dir = if ($env:SESSION_DOCTOR_INSTALL_DIR) { $env:SESSION_DOCTOR_INSTALL_DIR } else { Join-Path $env:LOCALAPPDATA 'session-doctor\bin' }
$arch = if ($env:PROCESSOR_ARCHITECTURE -eq 'ARM64') { 'aarch64' } else { 'x86_64' }
$target = "$arch-pc-windows-msvc"
if ($env:SESSION_DOCTOR_BASE_URL) { $base = $env:SESSION_DOCTOR_BASE_URL }
elseif ($version -eq 'latest') { $base = "$repo/releases/latest/download" }
else { $base = "$repo/releases/download/v$($version.TrimStart('v'))" }

$name = "session-doctor-$target"
$archive = "$name.zip"
$tmp = Join-Path ([System.IO.Path]::GetTempPath()) ([System.Guid]::NewGuid())
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
    Write-Host "session-doctor-installer: downloading $base/$archive"
    Invoke-WebRequest -UseBasicParsing "$base/$archive" -OutFile (Join-Path $tmp $archive)
    Invoke-WebRequest -UseBasicParsing "$base/$archive.sha256" -OutFile (Join-Path $tmp "$archive.sha256")
    $want = ((Get-Content (Join-Path $tmp "$archive.sha256") -Raw).Trim() -split '\s+')[0].ToLower()
    $got = (Get-FileHash -Algorithm SHA256 (Join-Path $tmp $archive)).Hash.ToLower()
    if ($want -ne $got) { throw "${archive}: SHA-256 $got is not the published $want" }
    Expand-Archive -Path (Join-Path $tmp $archive) -DestinationPath $tmp
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    Copy-Item -Force (Join-Path $tmp "$name\session-doctor.exe") (Join-Path $dir 'session-doctor.exe')
    Write-Host "session-doctor-installer: installed in $dir"
    $path = [Environment]::GetEnvironmentVariable('Path', 'User')
    if (-not ($path -split ';' -contains $dir)) {
        [Environment]::SetEnvironmentVariable('Path', "$dir;$path", 'User')
        Write-Host "session-doctor-installer: added $dir to your PATH (open a new terminal)"
    }
} finally {
    Remove-Item -Recurse -Force $tmp
}
