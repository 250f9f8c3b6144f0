#[test]
fn it() {}
