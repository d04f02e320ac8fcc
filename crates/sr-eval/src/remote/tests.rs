use super::*;

#[test]
fn server_urls_are_checked_before_anything_is_sent() {
    let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
    let ok = Servers::new(&urls(&["http://127.0.0.1:8787/", "https://a.example/base"]), Some("k")).ok().unwrap();
    assert_eq!(ok.urls(), ["http://127.0.0.1:8787", "https://a.example/base"]);
    let bad = [
        ("127.0.0.1:8787", "--server 127.0.0.1:8787: "),
        ("ftp://host/", "--server ftp://host/: not an http:// or https:// URL"),
        ("http://user:pw@host/", "--server http://user:pw@host/: give the key with --api-key-file, not in the URL"),
        ("http://host/?x=1", "--server http://host/?x=1: a server's URL has no query or fragment"),
        ("not a url", "--server not a url: "),
    ];
    for (url, message) in bad {
        let error = Servers::new(&urls(&[url]), None).err().unwrap();
        assert!(error.starts_with(message), "{url}: {error}");
    }
    assert_eq!(Servers::new(&[], None).err().unwrap(), "no --server given");
    let newline = Servers::new(&urls(&["http://h/"]), Some("a\nb")).err().unwrap();
    assert_eq!(newline, "the API key holds characters an HTTP header cannot carry");
}

#[test]
fn the_key_is_the_files_first_line_that_is_not_a_comment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    std::fs::write(&file, "# for the eval server\n\n  key-0123456789abcdef  \nsecond\n").unwrap();
    assert_eq!(read_key(&file).unwrap(), "key-0123456789abcdef");
    std::fs::write(&file, "# none\n\n").unwrap();
    assert!(read_key(&file).unwrap_err().ends_with("the file holds no key"));
    assert!(read_key(&dir.path().join("missing")).unwrap_err().starts_with("--api-key-file "));
}

#[test]
fn a_workload_is_served_by_its_file_stem() {
    assert_eq!(served_name("examples/review/review.sr"), "review");
    assert_eq!(served_name("flows.yaml"), "flows");
    assert_eq!(served_name("review"), "review");
}
