-- locust / ASPseek word index (MySQL, MariaDB), as written by `sediment project locust`.
--
-- Table and column names, types and keys follow ASPseek's MySQL schema (locust borrowed its
-- table design from ASPseek): MyISAM tables with the binary character set, so text columns
-- hold the UTF-8 bytes sediment writes, compared byte by byte. Deliberate differences:
-- * wordurl keeps only (word, word_id): locust's dictionary. ASPseek's urls/urlcount/
--   totalcount columns held its own reverse index, which locust keeps in files.
-- * urlword.url is varbinary(2048) with a non-unique index on its first 255 bytes instead
--   of varchar(128) UNIQUE: real URLs are longer than 128 bytes; sediment writes each URL
--   once, longer URLs are left out (counted).
-- * The text columns have room for their limits in characters of UTF-8 (4 bytes each):
--   title 128 characters, txt 255, keywords 255, description 100; content_type 128 bytes.
--   etag (255), last_modified (64), sites.site and robots (255 each) are wider too, so
--   real values fit whole; longer values are cut at a character boundary.
-- * robots(hostinfo, path): the disallowed path prefixes of a site's robots.txt for the
--   crawler's user agent and `*`; hostinfo is the site as in sites.site.
-- * stat (the search query log) is created empty.
-- Values the archive does not hold (sediment's choices):
-- * urlword.next_index_time = last_index_time + 604800 (one week, ASPseek's default re-index
--   `Period`); 0 (due now) for URLs never fetched.
-- * urlwordsNN.txt: the first 255 characters of the body text in document order (headlines
--   included; no title, nav or footer), white space collapsed.
-- * urlwordsNN.lang: the seed declares it but leaves it unused; sediment fills it with the
--   first two letters of the page's primary language (`<html lang>`), an extension.
-- Every CREATE is preceded by DROP TABLE IF EXISTS, so the files can be loaded again
-- (with notes switched off, as mysqldump does, so a first load reports nothing).

SET @OLD_SQL_NOTES = @@SQL_NOTES, SQL_NOTES = 0;

DROP TABLE IF EXISTS wordurl;
CREATE TABLE wordurl (
  word varbinary(255) NOT NULL,
  word_id int(11) NOT NULL AUTO_INCREMENT,
  PRIMARY KEY (word_id),
  UNIQUE KEY word (word)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlword;
CREATE TABLE urlword (
  url_id int(11) NOT NULL AUTO_INCREMENT,
  site_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  url varbinary(2048) NOT NULL DEFAULT '',
  next_index_time int(11) NOT NULL DEFAULT 0,
  status smallint(6) NOT NULL DEFAULT 0,
  crc varbinary(32) NOT NULL DEFAULT '',
  last_modified varbinary(64) NOT NULL DEFAULT '',
  etag varbinary(255) NOT NULL DEFAULT '',
  last_index_time int(11) NOT NULL DEFAULT 0,
  referrer int(11) NOT NULL DEFAULT 0,
  tag int(11) NOT NULL DEFAULT 0,
  hops tinyint(3) unsigned NOT NULL DEFAULT 0,
  redir int(11) DEFAULT NULL,
  origin tinyint(3) unsigned DEFAULT NULL,
  PRIMARY KEY (url_id),
  KEY url (url(255)),
  KEY next_index_time (next_index_time),
  KEY hops (hops, next_index_time),
  KEY crc (origin, site_id, crc(8))
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords00;
CREATE TABLE urlwords00 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords01;
CREATE TABLE urlwords01 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords02;
CREATE TABLE urlwords02 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords03;
CREATE TABLE urlwords03 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords04;
CREATE TABLE urlwords04 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords05;
CREATE TABLE urlwords05 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords06;
CREATE TABLE urlwords06 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords07;
CREATE TABLE urlwords07 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords08;
CREATE TABLE urlwords08 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords09;
CREATE TABLE urlwords09 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords10;
CREATE TABLE urlwords10 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords11;
CREATE TABLE urlwords11 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords12;
CREATE TABLE urlwords12 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords13;
CREATE TABLE urlwords13 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords14;
CREATE TABLE urlwords14 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS urlwords15;
CREATE TABLE urlwords15 (
  url_id int(11) NOT NULL DEFAULT 0,
  deleted tinyint(4) NOT NULL DEFAULT 0,
  wordcount smallint(5) unsigned DEFAULT NULL,
  totalcount mediumint(8) unsigned DEFAULT NULL,
  content_type varbinary(128) NOT NULL DEFAULT '',
  charset varbinary(32) NOT NULL DEFAULT '',
  title varbinary(512) NOT NULL DEFAULT '',
  txt varbinary(1020) NOT NULL DEFAULT '',
  docsize int(11) NOT NULL DEFAULT 0,
  keywords varbinary(1020) NOT NULL DEFAULT '',
  description varbinary(400) NOT NULL DEFAULT '',
  lang varbinary(2) NOT NULL DEFAULT '',
  words longblob,
  hrefs longblob,
  UNIQUE KEY url_id (url_id)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS robots;
CREATE TABLE robots (
  hostinfo varbinary(255) NOT NULL DEFAULT '',
  path varbinary(255) NOT NULL DEFAULT '',
  KEY hostinfo (hostinfo)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS sites;
CREATE TABLE sites (
  site_id int(11) NOT NULL AUTO_INCREMENT,
  site varbinary(255) NOT NULL DEFAULT '',
  PRIMARY KEY (site_id),
  UNIQUE KEY site (site)
) ENGINE=MyISAM DEFAULT CHARSET=binary;

DROP TABLE IF EXISTS stat;
CREATE TABLE stat (
  addr varbinary(128) DEFAULT NULL,
  proxy varbinary(128) DEFAULT NULL,
  query varbinary(255) DEFAULT NULL,
  ul varbinary(255) DEFAULT NULL,
  sp varbinary(255) DEFAULT NULL,
  site int(11) DEFAULT NULL,
  np smallint(6) DEFAULT NULL,
  ps tinyint(3) unsigned DEFAULT NULL,
  sites int(11) DEFAULT NULL,
  urls int(11) DEFAULT NULL,
  start decimal(15,3) DEFAULT NULL,
  finish decimal(15,3) DEFAULT NULL,
  referer varbinary(255) DEFAULT NULL
) ENGINE=MyISAM DEFAULT CHARSET=binary;

SET SQL_NOTES = @OLD_SQL_NOTES;
