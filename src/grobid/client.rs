//! The HTTP client of a GROBID server: `POST /api/processFulltextDocument` with the PDF
//! as the multipart part `input`, retried with back-off while GROBID answers 503 (its
//! "all workers busy" reply).

use std::time::Duration;

use super::multipart::MultipartForm;

/// GROBID replies (TEI documents) larger than this are refused as a transport error.
const MAX_REPLY_BYTES: u64 = 256 << 20;
/// Back-off waits are capped at this.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What is sent with every document, and how patiently.
#[derive(Debug, Clone)]
pub struct GrobidOptions {
    /// Base URL of the server, e.g. `http://localhost:8070`.
    pub url: String,
    /// Whole-call timeout (sending, processing, receiving).
    pub timeout: Duration,
    /// GROBID `consolidateHeader` (0 none, 1 Crossref/biblio-glutton, 2 DOI only, …).
    pub consolidate_header: Option<u8>,
    /// GROBID `consolidateCitations`.
    pub consolidate_citations: Option<u8>,
    /// GROBID `consolidateFunders`.
    pub consolidate_funders: Option<u8>,
    /// GROBID `includeRawCitations`: keep each reference as printed.
    pub include_raw_citations: bool,
    /// GROBID `includeRawAffiliations`.
    pub include_raw_affiliations: bool,
    /// GROBID `includeRawCopyrights`.
    pub include_raw_copyrights: bool,
    /// GROBID `segmentSentences`.
    pub segment_sentences: bool,
    /// GROBID `generateIDs`.
    pub generate_ids: bool,
    /// GROBID `teiCoordinates`, one field per element name (`ref`, `biblStruct`, …).
    pub tei_coordinates: Vec<String>,
    /// Further form fields, sent as given.
    pub extra_fields: Vec<(String, String)>,
    /// How often a 503 is retried before the file is left for a later run.
    pub retries: u32,
    /// First back-off wait; doubled after each 503 (GROBID's `Retry-After` wins).
    pub backoff: Duration,
}

impl GrobidOptions {
    pub fn new(url: &str) -> GrobidOptions {
        GrobidOptions {
            url: url.trim_end_matches('/').to_string(),
            timeout: Duration::from_secs(180),
            consolidate_header: None,
            consolidate_citations: None,
            consolidate_funders: None,
            include_raw_citations: false,
            include_raw_affiliations: false,
            include_raw_copyrights: false,
            segment_sentences: false,
            generate_ids: false,
            tei_coordinates: Vec::new(),
            extra_fields: Vec::new(),
            retries: 6,
            backoff: Duration::from_secs(2),
        }
    }

    /// The form fields besides the file, in a fixed order.
    pub fn form_fields(&self) -> Vec<(String, String)> {
        let mut fields = Vec::new();
        let mut level = |name: &str, value: Option<u8>| {
            if let Some(v) = value {
                fields.push((name.to_string(), v.to_string()));
            }
        };
        level("consolidateHeader", self.consolidate_header);
        level("consolidateCitations", self.consolidate_citations);
        level("consolidateFunders", self.consolidate_funders);
        for (name, on) in [
            ("includeRawCitations", self.include_raw_citations),
            ("includeRawAffiliations", self.include_raw_affiliations),
            ("includeRawCopyrights", self.include_raw_copyrights),
            ("segmentSentences", self.segment_sentences),
            ("generateIDs", self.generate_ids),
        ] {
            if on {
                fields.push((name.to_string(), "1".to_string()));
            }
        }
        for element in &self.tei_coordinates {
            fields.push(("teiCoordinates".to_string(), element.clone()));
        }
        fields.extend(self.extra_fields.iter().cloned());
        fields
    }
}

/// The result of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// GROBID answered (any status but a final 503).
    Reply { status: u16, body: Vec<u8> },
    /// No complete reply within the timeout.
    Timeout,
    /// Still 503 after every retry: try again later.
    Busy { attempts: u32 },
    /// The server could not be reached or broke the exchange.
    Transport(String),
}

pub struct GrobidClient {
    agent: ureq::Agent,
    options: GrobidOptions,
}

impl GrobidClient {
    pub fn new(options: GrobidOptions) -> GrobidClient {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.timeout.min(Duration::from_secs(20))))
            .user_agent(concat!("sediment/", env!("CARGO_PKG_VERSION")))
            .build();
        GrobidClient {
            agent: config.into(),
            options,
        }
    }

    pub fn endpoint(&self) -> String {
        format!("{}/api/processFulltextDocument", self.options.url)
    }

    /// `GET /api/isalive`: `Ok(None)` when the server answers 200, `Ok(Some(status))`
    /// when it answers something else (a proxy may not forward that path), `Err` when
    /// it cannot be reached.
    pub fn check_alive(&self) -> Result<Option<u16>, String> {
        let url = format!("{}/api/isalive", self.options.url);
        match self.agent.get(&url).call() {
            Ok(response) if response.status().as_u16() == 200 => Ok(None),
            Ok(response) => Ok(Some(response.status().as_u16())),
            Err(e) => Err(format!("{url}: {e}")),
        }
    }

    /// Sends one PDF (`file_name` names it in the form) and waits for the reply,
    /// retrying while GROBID is busy.
    pub fn process(&self, pdf: &[u8], file_name: &str) -> CallOutcome {
        let mut form = MultipartForm::new();
        form.file("input", file_name, "application/pdf", pdf);
        for (name, value) in self.options.form_fields() {
            form.text(&name, &value);
        }
        let (content_type, body) = form.build();
        let url = self.endpoint();
        let mut wait = self.options.backoff;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let sent = self
                .agent
                .post(&url)
                .header("Content-Type", &content_type)
                .header("Accept", "application/xml")
                .send(&body[..]);
            let response = match sent {
                Ok(response) => response,
                Err(e) => return classify_error(e),
            };
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("Retry-After")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = match response
                .into_body()
                .with_config()
                .limit(MAX_REPLY_BYTES)
                .read_to_vec()
            {
                Ok(body) => body,
                Err(e) => return classify_error(e),
            };
            if status != 503 {
                return CallOutcome::Reply { status, body };
            }
            if attempts > self.options.retries {
                return CallOutcome::Busy { attempts };
            }
            std::thread::sleep(retry_after.unwrap_or(wait).min(MAX_BACKOFF));
            wait = (wait * 2).min(MAX_BACKOFF);
        }
    }
}

fn classify_error(error: ureq::Error) -> CallOutcome {
    match &error {
        ureq::Error::Timeout(kind)
            if !matches!(kind, ureq::Timeout::Connect | ureq::Timeout::Resolve) =>
        {
            CallOutcome::Timeout
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => CallOutcome::Timeout,
        _ => CallOutcome::Transport(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_follow_the_options() {
        let mut options = GrobidOptions::new("http://localhost:8070/");
        assert_eq!(options.url, "http://localhost:8070");
        assert!(options.form_fields().is_empty());
        options.consolidate_header = Some(1);
        options.include_raw_citations = true;
        options.tei_coordinates = vec!["ref".into(), "figure".into()];
        options.extra_fields = vec![("start".into(), "1".into())];
        let fields = options.form_fields();
        let fields: Vec<(&str, &str)> = fields
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                ("consolidateHeader", "1"),
                ("includeRawCitations", "1"),
                ("teiCoordinates", "ref"),
                ("teiCoordinates", "figure"),
                ("start", "1"),
            ]
        );
    }
}
