//! A safe-Rust check that an X display would accept a connection, done before `user-idle` is
//! called: `user-idle` 0.6 does not check `XOpenDisplay` for NULL, so a missing, dead or
//! unauthorised display would crash the whole daemon with SIGSEGV.
//!
//! The check connects like Xlib (local socket `/tmp/.X11-unix/X<n>` or its abstract twin, or
//! TCP port 6000+n), sends the X11 connection-setup request with the `MIT-MAGIC-COOKIE-1` from
//! `$XAUTHORITY` / `~/.Xauthority` when there is one, and reads the server's answer.
#![cfg_attr(not(feature = "os-idle"), allow(dead_code))]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(1500);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum XTarget {
    Local { number: u32 },
    Tcp { host: String, number: u32 },
}

impl XTarget {
    pub(crate) fn number(&self) -> u32 {
        match self {
            Self::Local { number } | Self::Tcp { number, .. } => *number,
        }
    }
}

/// Parse `DISPLAY` (`:0`, `:1.0`, `unix:0`, `host:10.0`, `[::1]:0`).
pub(crate) fn parse_display(display: &str) -> Option<XTarget> {
    let (host, rest) = display.trim().rsplit_once(':')?;
    let number: u32 = rest.split('.').next()?.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host == "unix" {
        Some(XTarget::Local { number })
    } else if host.contains('/') {
        // launchd-style "/private/tmp/...:0" sockets are not used on Linux.
        None
    } else {
        Some(XTarget::Tcp {
            host: host.to_owned(),
            number,
        })
    }
}

/// One `.Xauthority` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct XauthEntry {
    pub family: u16,
    pub address: Vec<u8>,
    pub number: Vec<u8>,
    pub name: Vec<u8>,
    pub data: Vec<u8>,
}

pub(crate) fn parse_xauthority(mut b: &[u8]) -> Vec<XauthEntry> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if b.len() < n {
            return None;
        }
        let (h, t) = b.split_at(n);
        *b = t;
        Some(h)
    }
    fn u16be(b: &mut &[u8]) -> Option<u16> {
        take(b, 2).map(|x| u16::from_be_bytes([x[0], x[1]]))
    }
    fn field(b: &mut &[u8]) -> Option<Vec<u8>> {
        let n = u16be(b)?;
        take(b, usize::from(n)).map(<[u8]>::to_vec)
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let entry = (|| {
            Some(XauthEntry {
                family: u16be(&mut b)?,
                address: field(&mut b)?,
                number: field(&mut b)?,
                name: field(&mut b)?,
                data: field(&mut b)?,
            })
        })();
        match entry {
            Some(e) => out.push(e),
            None => break,
        }
    }
    out
}

const FAMILY_LOCAL: u16 = 256;
const FAMILY_WILD: u16 = 65535;

/// The cookie Xlib would send for a local display: FamilyLocal with our host name, or a
/// wildcard entry, for this display number (or any number when the entry has none).
pub(crate) fn find_cookie(
    entries: &[XauthEntry],
    number: u32,
    hostname: Option<&str>,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let num = number.to_string().into_bytes();
    entries
        .iter()
        .filter(|e| e.name == b"MIT-MAGIC-COOKIE-1")
        .filter(|e| e.number.is_empty() || e.number == num)
        .find(|e| {
            e.family == FAMILY_WILD
                || (e.family == FAMILY_LOCAL && hostname.is_none_or(|h| e.address == h.as_bytes()))
        })
        .map(|e| (e.name.clone(), e.data.clone()))
}

/// Send the connection setup request and read the answer. `Ok` when the server accepts.
pub(crate) fn handshake<S: Read + Write>(
    mut s: S,
    auth: Option<(Vec<u8>, Vec<u8>)>,
) -> Result<(), String> {
    let (name, data) = auth.unwrap_or_default();
    let pad = |n: usize| (4 - n % 4) % 4;
    let name_len = u16::try_from(name.len()).map_err(|_| "auth name too long")?;
    let data_len = u16::try_from(data.len()).map_err(|_| "auth data too long")?;
    let mut req = Vec::with_capacity(12 + name.len() + data.len() + 8);
    req.extend_from_slice(&[b'l', 0]);
    req.extend_from_slice(&11u16.to_le_bytes());
    req.extend_from_slice(&0u16.to_le_bytes());
    req.extend_from_slice(&name_len.to_le_bytes());
    req.extend_from_slice(&data_len.to_le_bytes());
    req.extend_from_slice(&[0, 0]);
    req.extend_from_slice(&name);
    req.extend(std::iter::repeat_n(0u8, pad(name.len())));
    req.extend_from_slice(&data);
    req.extend(std::iter::repeat_n(0u8, pad(data.len())));
    s.write_all(&req).map_err(|e| format!("write: {e}"))?;
    let mut head = [0u8; 8];
    s.read_exact(&mut head).map_err(|e| format!("read: {e}"))?;
    match head[0] {
        1 => Ok(()),
        0 => {
            let n = usize::from(head[1]).min(255);
            let mut reason = vec![0u8; n];
            let _ = s.read_exact(&mut reason);
            Err(format!(
                "server refused the connection: {}",
                String::from_utf8_lossy(&reason)
                    .trim_end_matches('\0')
                    .trim()
            ))
        }
        2 => Err("server requires further authentication".to_owned()),
        other => Err(format!("unexpected setup reply {other}")),
    }
}

fn xauthority_path() -> Option<PathBuf> {
    match std::env::var_os("XAUTHORITY") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".Xauthority")),
    }
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Would `XOpenDisplay(display)` succeed? `Err` explains why not.
pub(crate) fn display_usable(display: &str) -> Result<(), String> {
    let target =
        parse_display(display).ok_or_else(|| format!("cannot parse DISPLAY={display:?}"))?;
    let entries = xauthority_path()
        .and_then(|p| std::fs::read(p).ok())
        .map(|b| parse_xauthority(&b))
        .unwrap_or_default();
    match &target {
        XTarget::Local { number } => {
            let stream = connect_local(*number)?;
            stream.set_read_timeout(Some(TIMEOUT)).ok();
            stream.set_write_timeout(Some(TIMEOUT)).ok();
            handshake(
                stream,
                find_cookie(&entries, *number, hostname().as_deref()),
            )
        }
        XTarget::Tcp { host, number } => {
            use std::net::ToSocketAddrs;
            let port = u16::try_from(6000 + *number).map_err(|_| "display number too large")?;
            let addr = (host.as_str(), port)
                .to_socket_addrs()
                .map_err(|e| format!("resolve {host}: {e}"))?
                .next()
                .ok_or_else(|| format!("no address for {host}"))?;
            let stream = std::net::TcpStream::connect_timeout(&addr, TIMEOUT)
                .map_err(|e| format!("connect {addr}: {e}"))?;
            stream.set_read_timeout(Some(TIMEOUT)).ok();
            stream.set_write_timeout(Some(TIMEOUT)).ok();
            // Xlib matches TCP cookies by address; a wildcard or same-number entry is the
            // usual case for forwarded displays.
            let cookie = find_cookie(&entries, target.number(), None);
            handshake(stream, cookie)
        }
    }
}

fn connect_local(number: u32) -> Result<std::os::unix::net::UnixStream, String> {
    let path = format!("/tmp/.X11-unix/X{number}");
    match std::os::unix::net::UnixStream::connect(&path) {
        Ok(s) => Ok(s),
        Err(e) => {
            #[cfg(target_os = "linux")]
            {
                use std::os::linux::net::SocketAddrExt;
                if let Ok(addr) = std::os::unix::net::SocketAddr::from_abstract_name(&path)
                    && let Ok(s) = std::os::unix::net::UnixStream::connect_addr(&addr)
                {
                    return Ok(s);
                }
            }
            Err(format!("connect {path}: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn display_names() {
        assert_eq!(parse_display(":0"), Some(XTarget::Local { number: 0 }));
        assert_eq!(
            parse_display("unix:3.1"),
            Some(XTarget::Local { number: 3 })
        );
        assert_eq!(
            parse_display("localhost:10.0"),
            Some(XTarget::Tcp {
                host: "localhost".into(),
                number: 10
            })
        );
        assert_eq!(
            parse_display("[::1]:2"),
            Some(XTarget::Tcp {
                host: "::1".into(),
                number: 2
            })
        );
        assert_eq!(parse_display("nonsense"), None);
        assert_eq!(parse_display(":x"), None);
    }

    fn entry(family: u16, addr: &str, num: &str, data: &[u8]) -> Vec<u8> {
        let mut v = family.to_be_bytes().to_vec();
        for f in [addr.as_bytes(), num.as_bytes(), b"MIT-MAGIC-COOKIE-1", data] {
            v.extend_from_slice(&u16::try_from(f.len()).unwrap().to_be_bytes());
            v.extend_from_slice(f);
        }
        v
    }

    #[test]
    fn xauthority_parsing_and_matching() {
        let mut blob = entry(FAMILY_LOCAL, "otherhost", "0", b"AAAA");
        blob.extend(entry(FAMILY_LOCAL, "myhost", "1", b"BBBB"));
        blob.extend(entry(FAMILY_WILD, "", "0", b"CCCC"));
        blob.extend_from_slice(&[0, 1, 0]); // truncated trailing garbage
        let entries = parse_xauthority(&blob);
        assert_eq!(entries.len(), 3);
        assert_eq!(find_cookie(&entries, 1, Some("myhost")).unwrap().1, b"BBBB");
        assert_eq!(find_cookie(&entries, 0, Some("myhost")).unwrap().1, b"CCCC");
        assert!(find_cookie(&entries, 7, Some("myhost")).is_none());
    }

    fn fake_server(reply: Vec<u8>) -> (UnixStream, std::thread::JoinHandle<Vec<u8>>) {
        let (client, mut server) = UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || {
            let mut req = vec![0u8; 12];
            server.read_exact(&mut req).unwrap();
            let n = usize::from(u16::from_le_bytes([req[6], req[7]]));
            let d = usize::from(u16::from_le_bytes([req[8], req[9]]));
            let pad = |n: usize| (4 - n % 4) % 4;
            let mut rest = vec![0u8; n + pad(n) + d + pad(d)];
            server.read_exact(&mut rest).unwrap();
            server.write_all(&reply).unwrap();
            req.extend(rest);
            req
        });
        (client, h)
    }

    #[test]
    fn handshake_success_and_refusal() {
        let (c, h) = fake_server(vec![1, 0, 11, 0, 0, 0, 0, 0]);
        handshake(c, Some((b"MIT-MAGIC-COOKIE-1".to_vec(), vec![7; 16]))).unwrap();
        let req = h.join().unwrap();
        assert_eq!(req[0], b'l');
        assert_eq!(u16::from_le_bytes([req[2], req[3]]), 11);
        assert_eq!(&req[12..30], b"MIT-MAGIC-COOKIE-1");

        let mut refusal = vec![0, 13, 11, 0, 0, 0, 4, 0];
        refusal.extend_from_slice(b"No protocol\0\0\0\0\0");
        let (c, h) = fake_server(refusal);
        let err = handshake(c, None).unwrap_err();
        assert!(err.contains("No protocol"), "{err}");
        h.join().unwrap();

        // A peer that hangs up is an error, not a crash.
        let (c, s) = UnixStream::pair().unwrap();
        drop(s);
        assert!(handshake(c, None).is_err());
    }
}
