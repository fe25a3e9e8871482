//! The words around a service name in a message, in several languages. The lists are lowercase
//! and sorted for binary search; a test checks.

/// Words longer than this are in no list; skipping them spares lowercasing long junk.
pub(super) const LONGEST_WORD_BYTES: usize = 64;

/// Nouns for the code itself; the name sits right before them ("Uber code") or after them
/// ("código de Uber"). Compounds are listed whole: "Google-Bestätigungscode" splits at its hyphen.
pub(super) const CODE_WORDS: &[&str] = &[
    "anmeldecode",
    "bestätigungscode",
    "code",
    "codes",
    "codice",
    "codici",
    "codigo",
    "codigos",
    "contraseña",
    "código",
    "códigos",
    "einmalcode",
    "freischaltcode",
    "kod",
    "kode",
    "otp",
    "passcode",
    "passcodes",
    "password",
    "passwort",
    "pin",
    "senha",
    "sicherheitscode",
    "verificatiecode",
    "verifizierungscode",
    "zugangscode",
    "код",
    "кода",
    "动态码",
    "校验码",
    "確認コード",
    "認証コード",
    "验证码",
    "인증번호",
];

/// "Your" and its kin: a name cannot come before them, and right after "Votre code" one may
/// follow with no connective ("Votre code Doctolib").
pub(super) const POSSESSIVES: &[&str] = &[
    "dein", "deine", "ihr", "ihre", "seu", "su", "sua", "ta", "teu", "ton", "tu", "tua", "tuo",
    "votre", "your", "ваш",
];

/// Words that lead from the code to the name after it: "code from PayPal", "código de Uber",
/// "code d'Amazon" (the elided "d").
pub(super) const CONNECTIVES: &[&str] = &[
    "ao", "bei", "by", "chez", "d", "da", "de", "del", "di", "do", "du", "en", "for", "from",
    "für", "para", "per", "pour", "to", "von", "в", "для", "от",
];

/// Generic words: never a name, even capitalised ("Your Security Code"), and skipped between
/// the code and the name ("Google verification code", "code de connexion BlaBlaCar").
pub(super) const STOP_WORDS: &[&str] = &[
    "2fa",
    "2sv",
    "a",
    "acceder",
    "accedere",
    "access",
    "accesso",
    "account",
    "accounts",
    "accès",
    "acessar",
    "acesso",
    "achtung",
    "action",
    "activación",
    "activation",
    "ad",
    "alert",
    "alerta",
    "all",
    "an",
    "and",
    "anmeldung",
    "anyone",
    "app",
    "approval",
    "as",
    "atención",
    "atenção",
    "attempt",
    "attention",
    "autenticación",
    "autenticação",
    "authentication",
    "authenticator",
    "authentification",
    "authorisation",
    "authorization",
    "automated",
    "aviso",
    "backup",
    "below",
    "bestätigung",
    "bonjour",
    "ce",
    "check",
    "ciao",
    "clave",
    "compte",
    "confirm",
    "confirmación",
    "confirmation",
    "confirmação",
    "connexion",
    "conta",
    "cuenta",
    "customer",
    "das",
    "dear",
    "der",
    "device",
    "die",
    "digit",
    "digits",
    "dos",
    "e",
    "ein",
    "eine",
    "einmal",
    "el",
    "email",
    "enter",
    "entrar",
    "esse",
    "esta",
    "este",
    "factor",
    "following",
    "free",
    "freemsg",
    "fw",
    "fwd",
    "hallo",
    "hello",
    "here",
    "hey",
    "hi",
    "hinweis",
    "hola",
    "id",
    "identification",
    "il",
    "important",
    "importante",
    "in",
    "info",
    "ingresar",
    "iniciar",
    "inicio",
    "konto",
    "l",
    "la",
    "las",
    "le",
    "lembrete",
    "les",
    "link",
    "log",
    "logging",
    "login",
    "logon",
    "los",
    "magic",
    "mail",
    "mensaje",
    "message",
    "mfa",
    "mot",
    "msg",
    "multi",
    "my",
    "new",
    "no",
    "not",
    "note",
    "notice",
    "notificación",
    "notification",
    "o",
    "of",
    "oi",
    "olá",
    "on",
    "one",
    "online",
    "our",
    "pairing",
    "passe",
    "passkey",
    "personal",
    "phone",
    "please",
    "rappel",
    "re",
    "recordatorio",
    "recovery",
    "registration",
    "reminder",
    "request",
    "required",
    "reset",
    "secret",
    "secure",
    "security",
    "segurança",
    "seguridad",
    "sesión",
    "sessão",
    "sicherheit",
    "sign",
    "signin",
    "signing",
    "signup",
    "single",
    "sms",
    "status",
    "step",
    "subject",
    "support",
    "sécurité",
    "team",
    "temporary",
    "text",
    "the",
    "this",
    "time",
    "transaction",
    "two",
    "txt",
    "um",
    "uma",
    "un",
    "una",
    "une",
    "unique",
    "update",
    "urgent",
    "urgente",
    "usage",
    "use",
    "user",
    "uso",
    "usuario",
    "valid",
    "validación",
    "validation",
    "verifica",
    "verificación",
    "verification",
    "verificação",
    "verifizierung",
    "verify",
    "voici",
    "vérification",
    "warning",
    "web",
    "web발신",
    "welcome",
    "you",
    "zugang",
    "única",
    "único",
    "входа",
    "подтверждения",
    "광고",
    "국외발신",
    "국제발신",
];

/// Lowercase words that may sit inside a name, between two capitalised words:
/// "Bank of America", "Banco do Brasil".
pub(super) const JOINERS: &[&str] = &["da", "de", "del", "do", "dos", "du", "of"];

#[cfg(test)]
mod tests {
    use super::super::scan::lowercase;
    use super::*;

    const WORD_LISTS: &[(&str, &[&str])] = &[
        ("CODE_WORDS", CODE_WORDS),
        ("POSSESSIVES", POSSESSIVES),
        ("CONNECTIVES", CONNECTIVES),
        ("STOP_WORDS", STOP_WORDS),
        ("JOINERS", JOINERS),
    ];

    #[test]
    fn word_lists_are_sorted_lowercase_and_unique_for_binary_search() {
        for (name, list) in WORD_LISTS {
            for pair in list.windows(2) {
                assert!(
                    pair[0] < pair[1],
                    "{name}: {:?} before {:?}",
                    pair[0],
                    pair[1]
                );
            }
            for word in *list {
                assert_eq!(*word, lowercase(word), "{name}: {word} is not lowercase");
                assert!(
                    word.len() <= LONGEST_WORD_BYTES,
                    "{name}: {word} is too long"
                );
            }
        }
    }

    #[test]
    fn a_word_has_one_class() {
        let classed = [CODE_WORDS, POSSESSIVES, CONNECTIVES, STOP_WORDS];
        for (i, list) in classed.iter().enumerate() {
            for other in &classed[i + 1..] {
                for word in *list {
                    assert!(other.binary_search(word).is_err(), "{word} is in two lists");
                }
            }
        }
    }
}
