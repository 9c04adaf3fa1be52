//! `multipart/form-data` request bodies (RFC 7578), as GROBID's API takes them.

/// A form being built: text fields and files, in order.
pub struct MultipartForm {
    parts: Vec<Part>,
}

struct Part {
    name: String,
    file_name: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

/// Field and file names go into a quoted header parameter: quotes, backslashes and line
/// breaks are replaced so that they cannot end the header.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\r' | '\n' => '_',
            c => c,
        })
        .collect()
}

impl Default for MultipartForm {
    fn default() -> Self {
        Self::new()
    }
}

impl MultipartForm {
    pub fn new() -> MultipartForm {
        MultipartForm { parts: Vec::new() }
    }

    pub fn text(&mut self, name: &str, value: &str) -> &mut Self {
        self.parts.push(Part {
            name: name.to_string(),
            file_name: None,
            content_type: None,
            data: value.as_bytes().to_vec(),
        });
        self
    }

    pub fn file(
        &mut self,
        name: &str,
        file_name: &str,
        content_type: &str,
        data: &[u8],
    ) -> &mut Self {
        self.parts.push(Part {
            name: name.to_string(),
            file_name: Some(file_name.to_string()),
            content_type: Some(content_type.to_string()),
            data: data.to_vec(),
        });
        self
    }

    /// The body and its `Content-Type` header value. The boundary is chosen so that it
    /// occurs in no part.
    pub fn build(&self) -> (String, Vec<u8>) {
        let boundary = self.boundary();
        let mut body = Vec::with_capacity(self.parts.iter().map(|p| p.data.len() + 200).sum());
        for part in &self.parts {
            body.extend_from_slice(b"--");
            body.extend_from_slice(boundary.as_bytes());
            body.extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
            body.extend_from_slice(quoted(&part.name).as_bytes());
            body.push(b'"');
            if let Some(file_name) = &part.file_name {
                body.extend_from_slice(b"; filename=\"");
                body.extend_from_slice(quoted(file_name).as_bytes());
                body.push(b'"');
            }
            body.extend_from_slice(b"\r\n");
            if let Some(content_type) = &part.content_type {
                body.extend_from_slice(b"Content-Type: ");
                body.extend_from_slice(content_type.as_bytes());
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"\r\n");
            body.extend_from_slice(&part.data);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"--");
        body.extend_from_slice(boundary.as_bytes());
        body.extend_from_slice(b"--\r\n");
        (format!("multipart/form-data; boundary={boundary}"), body)
    }

    fn boundary(&self) -> String {
        use sha1::{Digest, Sha1};
        let mut hasher = Sha1::new();
        for part in &self.parts {
            hasher.update(part.name.as_bytes());
            hasher.update(&part.data);
        }
        let seed = format!("sediment-{}", hex::encode(&hasher.finalize()[..12]));
        pick_boundary(&seed, &self.parts)
    }
}

/// `SEED-0`, `SEED-1`, …: the first that occurs in no part.
fn pick_boundary(seed: &str, parts: &[Part]) -> String {
    let mut counter = 0u32;
    loop {
        let candidate = format!("{seed}-{counter}");
        let finder = memchr::memmem::Finder::new(candidate.as_bytes());
        if parts.iter().all(|p| finder.find(&p.data).is_none()) {
            return candidate;
        }
        counter += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_layout() {
        let mut form = MultipartForm::new();
        form.text("consolidateHeader", "1").file(
            "input",
            "a\"b.pdf",
            "application/pdf",
            b"%PDF-1.4\r\n...",
        );
        let (content_type, body) = form.build();
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let text = String::from_utf8(body).unwrap();
        let expected = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"consolidateHeader\"\r\n\r\n1\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"input\"; filename=\"a_b.pdf\"\r\n\
             Content-Type: application/pdf\r\n\r\n%PDF-1.4\r\n...\r\n--{boundary}--\r\n"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn boundary_never_occurs_in_the_data() {
        let part = |data: &str| Part {
            name: "x".into(),
            file_name: None,
            content_type: None,
            data: data.as_bytes().to_vec(),
        };
        assert_eq!(pick_boundary("S", &[part("abc")]), "S-0");
        assert_eq!(pick_boundary("S", &[part("..S-0..S-1")]), "S-2");
    }
}
