//! The table insertion modes, as html5ever implements them, foster parenting included: text
//! or an element where a cell belongs goes before the table, by the "in body" rules.

use html5ever::local_name;

use super::tokenizer::{RawKind, Unsupported};
use super::{
    Builder, Flow, Formatting, Mode, Scope, TagInfo, Tok, table_body_context, table_outer,
    table_row_context, table_scope,
};

impl Builder {
    /// Processes a token misplaced in a table by the "in body" rules, inserting before the
    /// table.
    pub(super) fn foster<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        self.foster_parenting = true;
        let flow = self.in_body(token, tag);
        self.foster_parenting = false;
        flow
    }

    pub(super) fn in_table<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match token {
            Tok::Chars(_) => {
                if !self.current_in(table_outer) {
                    return self.foster(token, tag);
                }
                self.original_mode = self.mode;
                Ok(Flow::Reprocess(Mode::InTableText, token))
            }
            Tok::Comment => {
                self.comment_here();
                Ok(Flow::Done)
            }
            Tok::Start => match *name {
                local_name!("caption") => {
                    self.pop_until_current(table_scope);
                    self.formatting.push(Formatting::Marker);
                    self.insert(tag);
                    self.mode = Mode::InCaption;
                    Ok(Flow::Done)
                }
                local_name!("colgroup") => {
                    self.pop_until_current(table_scope);
                    self.insert(tag);
                    self.mode = Mode::InColumnGroup;
                    Ok(Flow::Done)
                }
                local_name!("col") => {
                    self.pop_until_current(table_scope);
                    self.insert_phantom(local_name!("colgroup"));
                    Ok(Flow::Reprocess(Mode::InColumnGroup, token))
                }
                local_name!("tbody") | local_name!("tfoot") | local_name!("thead") => {
                    self.pop_until_current(table_scope);
                    self.insert(tag);
                    self.mode = Mode::InTableBody;
                    Ok(Flow::Done)
                }
                local_name!("td") | local_name!("th") | local_name!("tr") => {
                    self.pop_until_current(table_scope);
                    self.insert_phantom(local_name!("tbody"));
                    Ok(Flow::Reprocess(Mode::InTableBody, token))
                }
                local_name!("table") => {
                    if self.in_scope_named(&local_name!("table"), Scope::Table) {
                        self.pop_until_named(&local_name!("table"));
                        return Ok(Flow::Reprocess(self.reset_mode()?, token));
                    }
                    Ok(Flow::Done)
                }
                local_name!("style") => {
                    self.parse_raw(tag, RawKind::Rawtext);
                    Ok(Flow::Done)
                }
                local_name!("script") => {
                    self.parse_raw(tag, RawKind::ScriptData);
                    Ok(Flow::Done)
                }
                local_name!("template") => Err(Unsupported("template")),
                local_name!("input") => {
                    let hidden_input = tag.attrs.iter().any(|a| {
                        &*a.name.local == "type" && a.value.eq_ignore_ascii_case("hidden")
                    });
                    if !hidden_input {
                        return self.foster(token, tag);
                    }
                    self.insert_and_pop(tag);
                    Ok(Flow::Done)
                }
                local_name!("form") => {
                    if self.form.is_none() {
                        self.form = Some(self.insert_and_pop(tag));
                    }
                    Ok(Flow::Done)
                }
                _ => self.foster(token, tag),
            },
            Tok::End => match *name {
                local_name!("table") => {
                    if self.in_scope_named(&local_name!("table"), Scope::Table) {
                        self.pop_until_named(&local_name!("table"));
                        self.mode = self.reset_mode()?;
                    }
                    Ok(Flow::Done)
                }
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("tr") => Ok(Flow::Done),
                local_name!("template") => Err(Unsupported("template")),
                _ => self.foster(token, tag),
            },
            Tok::Eof => self.in_body(token, tag),
        }
    }

    pub(super) fn in_caption<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        let closes_caption = match token {
            Tok::Start => matches!(
                *name,
                local_name!("caption")
                    | local_name!("col")
                    | local_name!("colgroup")
                    | local_name!("tbody")
                    | local_name!("td")
                    | local_name!("tfoot")
                    | local_name!("th")
                    | local_name!("thead")
                    | local_name!("tr")
            ),
            Tok::End => matches!(*name, local_name!("table") | local_name!("caption")),
            _ => false,
        };
        if closes_caption {
            if !self.in_scope_named(&local_name!("caption"), Scope::Table) {
                return Ok(Flow::Done);
            }
            self.generate_implied_end(None);
            self.pop_until_named(&local_name!("caption"));
            self.clear_formatting_to_marker();
            if matches!(token, Tok::End) && *name == local_name!("caption") {
                self.mode = Mode::InTable;
                return Ok(Flow::Done);
            }
            return Ok(Flow::Reprocess(Mode::InTable, token));
        }
        if matches!(token, Tok::End)
            && matches!(
                *name,
                local_name!("body")
                    | local_name!("col")
                    | local_name!("colgroup")
                    | local_name!("html")
                    | local_name!("tbody")
                    | local_name!("td")
                    | local_name!("tfoot")
                    | local_name!("th")
                    | local_name!("thead")
                    | local_name!("tr")
            )
        {
            return Ok(Flow::Done);
        }
        self.in_body(token, tag)
    }

    pub(super) fn in_column_group<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        let anything_else = |builder: &mut Builder, token| {
            if builder.current_is(&local_name!("colgroup")) {
                builder.open.pop();
                Ok(Flow::Reprocess(Mode::InTable, token))
            } else {
                Ok(Flow::Done)
            }
        };
        match token {
            Tok::Chars(text) => match self.insert_leading_space(text) {
                Some(rest) => anything_else(self, rest),
                None => Ok(Flow::Done),
            },
            Tok::Comment => {
                self.comment_here();
                Ok(Flow::Done)
            }
            Tok::Start if *name == local_name!("html") => Err(Unsupported("second <html>")),
            Tok::Start if *name == local_name!("col") => {
                self.insert_and_pop(tag);
                Ok(Flow::Done)
            }
            Tok::End if *name == local_name!("colgroup") => {
                if self.current_is(&local_name!("colgroup")) {
                    self.open.pop();
                    self.mode = Mode::InTable;
                }
                Ok(Flow::Done)
            }
            Tok::End if *name == local_name!("col") => Ok(Flow::Done),
            Tok::Start | Tok::End if *name == local_name!("template") => {
                Err(Unsupported("template"))
            }
            Tok::Eof => self.in_body(token, tag),
            _ => anything_else(self, token),
        }
    }

    pub(super) fn in_table_body<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match token {
            Tok::Start if *name == local_name!("tr") => {
                self.pop_until_current(table_body_context);
                self.insert(tag);
                self.mode = Mode::InRow;
                Ok(Flow::Done)
            }
            Tok::Start if matches!(*name, local_name!("th") | local_name!("td")) => {
                self.pop_until_current(table_body_context);
                self.insert_phantom(local_name!("tr"));
                Ok(Flow::Reprocess(Mode::InRow, token))
            }
            Tok::End
                if matches!(
                    *name,
                    local_name!("tbody") | local_name!("tfoot") | local_name!("thead")
                ) =>
            {
                if self.in_scope_named(name, Scope::Table) {
                    self.pop_until_current(table_body_context);
                    self.open.pop();
                    self.mode = Mode::InTable;
                }
                Ok(Flow::Done)
            }
            Tok::Start
                if matches!(
                    *name,
                    local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("tbody")
                        | local_name!("tfoot")
                        | local_name!("thead")
                ) =>
            {
                self.leave_table_body(token)
            }
            Tok::End if *name == local_name!("table") => self.leave_table_body(token),
            Tok::End
                if matches!(
                    *name,
                    local_name!("body")
                        | local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("html")
                        | local_name!("td")
                        | local_name!("th")
                        | local_name!("tr")
                ) =>
            {
                Ok(Flow::Done)
            }
            _ => self.in_table(token, tag),
        }
    }

    fn leave_table_body<'t>(&mut self, token: Tok<'t>) -> Result<Flow<'t>, Unsupported> {
        // html5ever's set here is table, tbody, tfoot (not thead).
        let outer = |n: &html5ever::LocalName| {
            matches!(
                *n,
                local_name!("table") | local_name!("tbody") | local_name!("tfoot")
            )
        };
        if !self.in_scope(outer, Scope::Table) {
            return Ok(Flow::Done);
        }
        self.pop_until_current(table_body_context);
        self.open.pop();
        Ok(Flow::Reprocess(Mode::InTable, token))
    }

    pub(super) fn in_row<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match token {
            Tok::Start if matches!(*name, local_name!("th") | local_name!("td")) => {
                self.pop_until_current(table_row_context);
                self.insert(tag);
                self.mode = Mode::InCell;
                self.formatting.push(Formatting::Marker);
                Ok(Flow::Done)
            }
            Tok::End if *name == local_name!("tr") => {
                if self.in_scope_named(&local_name!("tr"), Scope::Table) {
                    self.pop_until_current(table_row_context);
                    self.open.pop();
                    self.mode = Mode::InTableBody;
                }
                Ok(Flow::Done)
            }
            Tok::Start
                if matches!(
                    *name,
                    local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("tbody")
                        | local_name!("tfoot")
                        | local_name!("thead")
                        | local_name!("tr")
                ) =>
            {
                self.leave_row(token)
            }
            Tok::End if *name == local_name!("table") => self.leave_row(token),
            Tok::End
                if matches!(
                    *name,
                    local_name!("tbody") | local_name!("tfoot") | local_name!("thead")
                ) =>
            {
                if !self.in_scope_named(name, Scope::Table) {
                    return Ok(Flow::Done);
                }
                self.leave_row(token)
            }
            Tok::End
                if matches!(
                    *name,
                    local_name!("body")
                        | local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("html")
                        | local_name!("td")
                        | local_name!("th")
                ) =>
            {
                Ok(Flow::Done)
            }
            _ => self.in_table(token, tag),
        }
    }

    fn leave_row<'t>(&mut self, token: Tok<'t>) -> Result<Flow<'t>, Unsupported> {
        if !self.in_scope_named(&local_name!("tr"), Scope::Table) {
            return Ok(Flow::Done);
        }
        self.pop_until_current(table_row_context);
        self.open.pop();
        Ok(Flow::Reprocess(Mode::InTableBody, token))
    }

    pub(super) fn in_cell<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        let is_cell =
            |n: &html5ever::LocalName| matches!(*n, local_name!("td") | local_name!("th"));
        match token {
            Tok::End if is_cell(name) => {
                if self.in_scope_named(name, Scope::Table) {
                    self.generate_implied_end(None);
                    self.pop_until_named(name);
                    self.clear_formatting_to_marker();
                    self.mode = Mode::InRow;
                }
                Ok(Flow::Done)
            }
            Tok::Start
                if matches!(
                    *name,
                    local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("tbody")
                        | local_name!("td")
                        | local_name!("tfoot")
                        | local_name!("th")
                        | local_name!("thead")
                        | local_name!("tr")
                ) =>
            {
                if !self.in_scope(is_cell, Scope::Table) {
                    return Ok(Flow::Done);
                }
                self.close_cell();
                Ok(Flow::Reprocess(Mode::InRow, token))
            }
            Tok::End
                if matches!(
                    *name,
                    local_name!("body")
                        | local_name!("caption")
                        | local_name!("col")
                        | local_name!("colgroup")
                        | local_name!("html")
                ) =>
            {
                Ok(Flow::Done)
            }
            Tok::End
                if matches!(
                    *name,
                    local_name!("table")
                        | local_name!("tbody")
                        | local_name!("tfoot")
                        | local_name!("thead")
                        | local_name!("tr")
                ) =>
            {
                if !self.in_scope_named(name, Scope::Table) {
                    return Ok(Flow::Done);
                }
                self.close_cell();
                Ok(Flow::Reprocess(Mode::InRow, token))
            }
            _ => self.in_body(token, tag),
        }
    }

    fn close_cell(&mut self) {
        self.generate_implied_end(None);
        self.pop_until(|n| matches!(*n, local_name!("td") | local_name!("th")));
        self.clear_formatting_to_marker();
    }
}
