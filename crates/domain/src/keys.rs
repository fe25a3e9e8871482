//! Agent keys with scopes, expiry and delegation: the scopes a key may hold, its id, and what a
//! key may make of itself.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use time::OffsetDateTime;
use ulid::Ulid;
use uuid::Uuid;

use crate::commands::CodeChannel;
use crate::{AgentId, AgentKeyHash, Label};

/// What a key allows. Every key holds `agent:read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    AgentRead,
    EmailRead,
    EmailSend,
    SmsRead,
    CodesRead,
    WalletRead,
    WalletPay,
    EventsRead,
    WebhooksManage,
    KeysManage,
}

impl Scope {
    /// Every scope, in the order the contract lists them.
    pub const ALL: [Scope; 10] = [
        Scope::AgentRead,
        Scope::EmailRead,
        Scope::EmailSend,
        Scope::SmsRead,
        Scope::CodesRead,
        Scope::WalletRead,
        Scope::WalletPay,
        Scope::EventsRead,
        Scope::WebhooksManage,
        Scope::KeysManage,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::AgentRead => "agent:read",
            Scope::EmailRead => "email:read",
            Scope::EmailSend => "email:send",
            Scope::SmsRead => "sms:read",
            Scope::CodesRead => "codes:read",
            Scope::WalletRead => "wallet:read",
            Scope::WalletPay => "wallet:pay",
            Scope::EventsRead => "events:read",
            Scope::WebhooksManage => "webhooks:manage",
            Scope::KeysManage => "keys:manage",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == text)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes; `agent:read` is always in it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scopes(u16);

impl Scopes {
    /// Every scope: the key made with the agent, and a rotated one.
    pub fn all() -> Self {
        Self::of(Scope::ALL)
    }

    /// These scopes and `agent:read`.
    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Self {
        Self(
            scopes
                .into_iter()
                .fold(Scope::AgentRead.bit(), |bits, scope| bits | scope.bit()),
        )
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// The first scope of these (in the contract's order) that `holder` lacks.
    pub fn first_not_in(self, holder: Scopes) -> Option<Scope> {
        self.iter().find(|scope| !holder.contains(*scope))
    }

    /// The scopes, in the contract's order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL
            .into_iter()
            .filter(move |scope| self.contains(*scope))
    }
}

impl fmt::Debug for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(Scope::as_str))
            .finish()
    }
}

/// Live keys one agent may hold at once, the first key included.
pub const MAX_LIVE_KEYS_PER_AGENT: usize = 50;
/// The depth of the deepest key that may still make one: the first key is depth 0.
pub const MAX_KEY_DEPTH: u8 = 4;
/// Characters of a key's label.
pub const MAX_KEY_LABEL_CHARS: usize = 200;

/// A key's id as shown: `key_` and the 26 characters of its UUID in Crockford's base32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub Uuid);

const KEY_ID_PREFIX: &str = "key_";

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{KEY_ID_PREFIX}{}", Ulid::from(self.0.as_u128()))
    }
}

/// Not `key_` and 26 characters of Crockford's base32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a key id")]
pub struct NotAKeyId;

impl FromStr for KeyId {
    type Err = NotAKeyId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let encoded = text.strip_prefix(KEY_ID_PREFIX).ok_or(NotAKeyId)?;
        let ulid = Ulid::from_string(encoded).map_err(|_| NotAKeyId)?;
        Ok(Self(Uuid::from_u128(ulid.into())))
    }
}

/// What a key holds: the part of it delegation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGrant {
    pub scopes: Scopes,
    pub expires_at: Option<OffsetDateTime>,
    /// 0 for the key made with the agent; one more than its maker's for a key made by a key.
    pub depth: u8,
}

impl KeyGrant {
    /// The key made with the agent or by a rotation: every scope, no expiry.
    pub fn first() -> Self {
        Self {
            scopes: Scopes::all(),
            expires_at: None,
            depth: 0,
        }
    }

    /// Whether the key has expired at `now`.
    pub fn expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires_at.is_some_and(|expiry| expiry <= now)
    }
}

/// A key as stored, never the key itself: what it may do, whose it is and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentKeyRecord {
    pub id: KeyId,
    pub agent_id: AgentId,
    pub hash: AgentKeyHash,
    pub label: Option<Label>,
    pub grant: KeyGrant,
    /// The key that made it; `None` for the first key and the keys an operator made.
    pub parent: Option<KeyId>,
    /// The key made with the agent or by a rotation: the one a rotation replaces.
    pub first: bool,
    pub created_at: OffsetDateTime,
    /// When it last authenticated a request, to the minute.
    pub last_used_at: Option<OffsetDateTime>,
}

impl AgentKeyRecord {
    /// The first key of `agent`, made at `created_at`: every scope, no expiry, made by no key.
    pub fn first(
        agent: AgentId,
        id: KeyId,
        hash: AgentKeyHash,
        created_at: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            agent_id: agent,
            hash,
            label: None,
            grant: KeyGrant::first(),
            parent: None,
            first: true,
            created_at,
            last_used_at: None,
        }
    }

    pub fn scopes(&self) -> Scopes {
        self.grant.scopes
    }

    pub fn holds(&self, scope: Scope) -> bool {
        self.grant.scopes.contains(scope)
    }
}

impl KeyId {
    /// A new id, ordered by the time it was made.
    pub fn generate() -> Self {
        Self(Uuid::now_v7())
    }
}

/// Why a key may not make the key asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DelegationRefusal {
    #[error("This key cannot grant the scope {0}: it does not hold it")]
    ScopeNotHeld(Scope),
    #[error("The new key would expire after this key, which expires at {}", rfc3339(.0))]
    OutlivesMaker(OffsetDateTime),
    #[error("This key was made by a chain of {MAX_KEY_DEPTH} keys and cannot make another")]
    TooDeep,
    #[error("The agent holds {MAX_LIVE_KEYS_PER_AGENT} live keys, the most it may")]
    TooManyKeys,
}

/// `at` as the API writes times.
fn rfc3339(at: &OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| at.to_string())
}

/// What a key asks for the key it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRequest {
    pub scopes: Scopes,
    pub expires_in: Option<Duration>,
}

/// The key `maker` may make as `asked` at `now` while the agent holds `live_keys`: a subset of
/// the maker's scopes, expiring no later than the maker (at the maker's expiry when none is
/// asked), one level deeper.
pub fn delegate(
    maker: &KeyGrant,
    asked: KeyRequest,
    now: OffsetDateTime,
    live_keys: usize,
) -> Result<KeyGrant, DelegationRefusal> {
    if maker.depth >= MAX_KEY_DEPTH {
        return Err(DelegationRefusal::TooDeep);
    }
    if let Some(scope) = asked.scopes.first_not_in(maker.scopes) {
        return Err(DelegationRefusal::ScopeNotHeld(scope));
    }
    let asked_expiry = asked.expires_in.map(|wait| now + wait);
    let expires_at = match (asked_expiry, maker.expires_at) {
        (Some(asked), Some(limit)) if asked > limit => {
            return Err(DelegationRefusal::OutlivesMaker(limit))
        }
        (Some(asked), _) => Some(asked),
        (None, limit) => limit,
    };
    if live_keys >= MAX_LIVE_KEYS_PER_AGENT {
        return Err(DelegationRefusal::TooManyKeys);
    }
    Ok(KeyGrant {
        scopes: asked.scopes,
        expires_at,
        depth: maker.depth + 1,
    })
}

/// The key an operator makes as `asked` at `now` while the agent holds `live_keys`: any scopes,
/// any expiry, made by no key (depth 0).
pub fn grant_by_operator(
    asked: KeyRequest,
    now: OffsetDateTime,
    live_keys: usize,
) -> Result<KeyGrant, DelegationRefusal> {
    if live_keys >= MAX_LIVE_KEYS_PER_AGENT {
        return Err(DelegationRefusal::TooManyKeys);
    }
    Ok(KeyGrant {
        scopes: asked.scopes,
        expires_at: asked.expires_in.map(|wait| now + wait),
        depth: 0,
    })
}

/// The scope that reads `channel` for a code wait.
pub fn scope_reading(channel: CodeChannel) -> Scope {
    match channel {
        CodeChannel::Sms => Scope::SmsRead,
        CodeChannel::Email => Scope::EmailRead,
    }
}

/// The channels a code wait may look at with `scopes`: those `named`, each of which the key must
/// read, else the scope it lacks; when none is named, those it reads (`None` when it reads them
/// all, `email:read` lacking when it reads none).
pub fn readable_channels(
    scopes: Scopes,
    named: Option<Vec<CodeChannel>>,
) -> Result<Option<Vec<CodeChannel>>, Scope> {
    let lacking = |channel: &CodeChannel| {
        let scope = scope_reading(*channel);
        (!scopes.contains(scope)).then_some(scope)
    };
    if let Some(named) = named {
        return match named.iter().find_map(lacking) {
            Some(scope) => Err(scope),
            None => Ok(Some(named)),
        };
    }
    let readable: Vec<CodeChannel> = [CodeChannel::Email, CodeChannel::Sms]
        .into_iter()
        .filter(|channel| lacking(channel).is_none())
        .collect();
    match readable.len() {
        0 => Err(Scope::EmailRead),
        2 => Ok(None),
        _ => Ok(Some(readable)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_795_305_600 + seconds).expect("a time")
    }

    fn asked(scopes: &[Scope], expires_in: Option<u64>) -> KeyRequest {
        KeyRequest {
            scopes: Scopes::of(scopes.iter().copied()),
            expires_in: expires_in.map(Duration::from_secs),
        }
    }

    #[test]
    fn scopes_read_as_the_contract_writes_them_and_every_set_holds_agent_read() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(Scope::parse("wallet:PAY"), None);
        assert_eq!(Scope::parse("admin"), None);
        let mail = Scopes::of([Scope::EmailRead]);
        assert!(mail.contains(Scope::AgentRead));
        assert!(!mail.contains(Scope::EmailSend));
        assert_eq!(
            mail.iter().map(Scope::as_str).collect::<Vec<_>>(),
            ["agent:read", "email:read"]
        );
        assert_eq!(Scopes::all().iter().count(), 10);
    }

    #[test]
    fn a_key_id_is_key_and_26_characters_and_reads_back() {
        let id = KeyId(Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0001));
        let shown = id.to_string();
        assert!(shown.starts_with("key_") && shown.len() == 30, "{shown}");
        assert_eq!(shown.parse::<KeyId>(), Ok(id));
        for bad in [
            "",
            "key_",
            "evt_01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "key_01ARZ3NDEKTSV4RRFFQ69G5FA!",
        ] {
            assert_eq!(bad.parse::<KeyId>(), Err(NotAKeyId), "{bad}");
        }
    }

    #[test]
    fn a_key_makes_only_a_subset_of_its_scopes() {
        let reader = KeyGrant {
            scopes: Scopes::of([Scope::EmailRead, Scope::KeysManage]),
            expires_at: None,
            depth: 1,
        };
        let child =
            delegate(&reader, asked(&[Scope::EmailRead], None), at(0), 2).expect("a subset");
        assert_eq!(child.scopes, Scopes::of([Scope::EmailRead]));
        assert_eq!(child.depth, 2);
        assert_eq!(
            delegate(
                &reader,
                asked(&[Scope::EmailRead, Scope::WalletPay], None),
                at(0),
                2
            ),
            Err(DelegationRefusal::ScopeNotHeld(Scope::WalletPay))
        );
    }

    #[test]
    fn a_key_expires_no_later_than_its_maker_and_takes_its_expiry_by_default() {
        let expiring = KeyGrant {
            expires_at: Some(at(3600)),
            ..KeyGrant::first()
        };
        let inherited = delegate(&expiring, asked(&[], None), at(0), 1).expect("made");
        assert_eq!(inherited.expires_at, Some(at(3600)));
        let sooner = delegate(&expiring, asked(&[], Some(60)), at(0), 1).expect("made");
        assert_eq!(sooner.expires_at, Some(at(60)));
        assert_eq!(
            delegate(&expiring, asked(&[], Some(3601)), at(0), 1),
            Err(DelegationRefusal::OutlivesMaker(at(3600)))
        );
        let forever = delegate(&KeyGrant::first(), asked(&[], None), at(0), 1).expect("made");
        assert_eq!(forever.expires_at, None);
        assert!(expiring.expired_at(at(3600)) && !expiring.expired_at(at(3599)));
    }

    #[test]
    fn depth_and_the_number_of_live_keys_are_bounded() {
        let deep = KeyGrant {
            depth: MAX_KEY_DEPTH,
            ..KeyGrant::first()
        };
        assert_eq!(
            delegate(&deep, asked(&[], None), at(0), 1),
            Err(DelegationRefusal::TooDeep)
        );
        let almost = KeyGrant {
            depth: MAX_KEY_DEPTH - 1,
            ..KeyGrant::first()
        };
        assert_eq!(
            delegate(&almost, asked(&[], None), at(0), 1).map(|key| key.depth),
            Ok(MAX_KEY_DEPTH)
        );
        assert_eq!(
            delegate(
                &KeyGrant::first(),
                asked(&[], None),
                at(0),
                MAX_LIVE_KEYS_PER_AGENT
            ),
            Err(DelegationRefusal::TooManyKeys)
        );
    }

    fn scopes_strategy() -> impl Strategy<Value = Scopes> {
        proptest::collection::vec(proptest::sample::select(Scope::ALL.to_vec()), 0..10)
            .prop_map(Scopes::of)
    }

    proptest! {
        /// Along any chain of delegations, no key holds a scope or an expiry its maker lacked.
        #[test]
        fn no_key_ever_holds_more_than_its_maker(
            chain in proptest::collection::vec(
                (scopes_strategy(), proptest::option::of(0u64..10_000)),
                1..8,
            ),
        ) {
            let mut maker = KeyGrant { expires_at: Some(at(5_000)), ..KeyGrant::first() };
            for (scopes, expires_in) in chain {
                let request = KeyRequest { scopes, expires_in: expires_in.map(Duration::from_secs) };
                match delegate(&maker, request, at(0), 1) {
                    Ok(child) => {
                        prop_assert!(child.scopes.first_not_in(maker.scopes).is_none());
                        prop_assert!(child.expires_at <= maker.expires_at);
                        prop_assert_eq!(child.depth, maker.depth + 1);
                        maker = child;
                    }
                    Err(DelegationRefusal::ScopeNotHeld(scope)) => {
                        prop_assert!(scopes.contains(scope) && !maker.scopes.contains(scope));
                    }
                    Err(DelegationRefusal::OutlivesMaker(limit)) => {
                        prop_assert_eq!(Some(limit), maker.expires_at);
                    }
                    Err(DelegationRefusal::TooDeep) => prop_assert_eq!(maker.depth, MAX_KEY_DEPTH),
                    Err(DelegationRefusal::TooManyKeys) => prop_assert!(false, "one live key"),
                }
            }
        }
    }

    #[test]
    fn a_code_wait_reads_only_the_channels_its_key_reads() {
        let (email, sms) = (CodeChannel::Email, CodeChannel::Sms);
        let mail_only = Scopes::of([Scope::CodesRead, Scope::EmailRead]);
        assert_eq!(readable_channels(mail_only, None), Ok(Some(vec![email])));
        assert_eq!(
            readable_channels(mail_only, Some(vec![sms])),
            Err(Scope::SmsRead)
        );
        assert_eq!(
            readable_channels(mail_only, Some(vec![email, sms])),
            Err(Scope::SmsRead)
        );
        assert_eq!(
            readable_channels(mail_only, Some(vec![email])),
            Ok(Some(vec![email]))
        );
        assert_eq!(readable_channels(Scopes::all(), None), Ok(None));
        assert_eq!(
            readable_channels(Scopes::of([Scope::CodesRead]), None),
            Err(Scope::EmailRead)
        );
    }

    #[test]
    fn an_operator_grants_any_scopes_and_expiry_within_the_live_keys() {
        let asked = asked(&[Scope::WalletPay], Some(60));
        let grant = grant_by_operator(asked, at(0), MAX_LIVE_KEYS_PER_AGENT - 1).expect("granted");
        assert_eq!(grant.depth, 0);
        assert_eq!(grant.expires_at, Some(at(60)));
        assert!(grant.scopes.contains(Scope::WalletPay));
        assert_eq!(
            grant_by_operator(asked, at(0), MAX_LIVE_KEYS_PER_AGENT),
            Err(DelegationRefusal::TooManyKeys)
        );
    }
}
