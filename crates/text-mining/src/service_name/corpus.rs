//! Messages shaped like real ones, with the service name expected from each (none for the last
//! part). Add a row for every message the recogniser gets wrong.

pub(super) const CORPUS: &[(&str, Option<&str>)] = &[
    // Google, Apple, Microsoft, Amazon
    ("G-482913 is your Google verification code.", Some("Google")),
    (
        "Google Verification Code\n\nHi Ana,\n\nWe received a request to access your Google \
         Account ana.lopez@gmail.com through your email address. Your Google verification code \
         is:\n\n482913\n\nIf you did not request this code, it is possible that someone else is \
         trying to access the Google Account ana.lopez@gmail.com.\n\nThe Google Accounts team",
        Some("Google"),
    ),
    (
        "Your Google Voice verification code is 582-019. Don't share this code with anyone.",
        Some("Google Voice"),
    ),
    (
        "Your Apple Account code is: 739204. Don't share it with anyone.",
        Some("Apple"),
    ),
    (
        "Your Apple ID Code is: 551093. Don't share it with anyone.\n\n@apple.com #551093",
        Some("Apple"),
    ),
    (
        "Use 4821 as Microsoft account security code",
        Some("Microsoft"),
    ),
    ("Microsoft account security code: 0947", Some("Microsoft")),
    (
        "Microsoft account\n\nSecurity code\n\nPlease use the following security code for the \
         Microsoft account ca**@outlook.com.\n\nSecurity code: 5930\n\nThanks,\nThe Microsoft \
         account team",
        Some("Microsoft"),
    ),
    (
        "Your code to sign in to Microsoft Teams is 482913",
        Some("Microsoft Teams"),
    ),
    (
        "301945 is your Amazon OTP. Do not share it with anyone.",
        Some("Amazon"),
    ),
    (
        "Amazon\n\nVerify your new Amazon account\n\nTo verify your email address, please use \
         the following One Time Password (OTP):\n\n720365\n\nDo not share this OTP with anyone. \
         Amazon Customer Service will never ask you to disclose or verify your Amazon password, \
         OTP, credit card, or banking account number.",
        Some("Amazon"),
    ),
    (
        "【Amazon】認証コード：482913。このコードを他人と共有しないでください。",
        Some("Amazon"),
    ),
    ("AMAZON: Your one-time code is 482913", Some("AMAZON")),
    // Messaging and social
    ("<#> 123456 is your Instagram code", Some("Instagram")),
    (
        "Your Instagram code is 123 456. Don't share it.",
        Some("Instagram"),
    ),
    (
        "WhatsApp code 123-456\nYou can also tap on this link to verify your phone: \
         v.whatsapp.com/123456\n\nDon't share this code with others",
        Some("WhatsApp"),
    ),
    ("Dein WhatsApp-Code: 123-456", Some("WhatsApp")),
    (
        "Telegram code: 12345\n\nDo not give this code to anyone, even if they say they are from \
         Telegram!",
        Some("Telegram"),
    ),
    ("Ваш код для входа в Telegram: 12345", Some("Telegram")),
    (
        "【微信】验证码 123456，用于登录，5分钟内有效。",
        Some("微信"),
    ),
    (
        "[TikTok] 123456 is your verification code, valid for 5 minutes. Do not share it with \
         anyone.",
        Some("TikTok"),
    ),
    (
        "[#][TikTok] 482913 is your verification code",
        Some("TikTok"),
    ),
    (
        "123456 is your Facebook confirmation code",
        Some("Facebook"),
    ),
    ("FB-12345 is your Facebook code", Some("Facebook")),
    (
        "Snapchat Code: 123456. Do not share this code with anyone!",
        Some("Snapchat"),
    ),
    (
        "Discord: Your security code is 482913. Don't share it.",
        Some("Discord"),
    ),
    (
        "Signal: Your code is 482913. Do not share this code",
        Some("Signal"),
    ),
    (
        "Your verification code for Twitter is 482913",
        Some("Twitter"),
    ),
    ("Your X confirmation code is 48WM3K", Some("X")),
    ("Your LINE verification code is 4821", Some("LINE")),
    ("Your Tinder code is 482913 Don't share", Some("Tinder")),
    (
        "[Web발신]\n[카카오] 인증번호 [482913]를 입력해주세요.",
        Some("카카오"),
    ),
    // Rides, travel, delivery
    ("[Uber] Your code is 1234", Some("Uber")),
    (
        "Your Uber code: 4821. Never share this code. Reply STOP ALL to 89203 to unsubscribe.",
        Some("Uber"),
    ),
    (
        "Tu código de Uber es 7302. No lo compartas con nadie.",
        Some("Uber"),
    ),
    (
        "Seu código Uber é 4829. Nunca compartilhe este código.",
        Some("Uber"),
    ),
    ("Ihr Uber-Code lautet 4829.", Some("Uber")),
    ("Your Lyft code is 2026", Some("Lyft")),
    ("Your Airbnb verification code is: 123456", Some("Airbnb")),
    (
        "Your Booking.com verification code is 482913",
        Some("Booking.com"),
    ),
    ("O seu código do iFood é 4821", Some("iFood")),
    (
        "Tu código para iniciar sesión en Rappi es 4821",
        Some("Rappi"),
    ),
    (
        "482913 est votre code de connexion BlaBlaCar",
        Some("BlaBlaCar"),
    ),
    // Payments, banks, crypto
    ("Your PayPal code is 123456", Some("PayPal")),
    ("123456 is your code from PayPal", Some("PayPal")),
    (
        "PayPal: 482913 ist Ihr Sicherheitscode. Geben Sie den Code nicht weiter.",
        Some("PayPal"),
    ),
    (
        "Your Venmo verification code is 482913. Venmo will never call you to ask for this code.",
        Some("Venmo"),
    ),
    (
        "Coinbase: Your verification code is 7392041. Don't share this code with anyone.",
        Some("Coinbase"),
    ),
    (
        "[Binance] Verification Code\n\nVerification Code: 902817\n\nThe verification code will \
         be valid for 30 minutes.",
        Some("Binance"),
    ),
    ("Your Binance verification code: 482913", Some("Binance")),
    (
        "Revolut code: 482-913. Do not share this code with anyone, including Revolut employees.",
        Some("Revolut"),
    ),
    ("Wise: 482913 is your code. Never share it.", Some("Wise")),
    (
        "BofA: Your one-time code is 482913. It expires in 10 min.",
        Some("BofA"),
    ),
    (
        "Your Wells Fargo one-time code is 482913.",
        Some("Wells Fargo"),
    ),
    (
        "Bank of America: Your code is 482913",
        Some("Bank of America"),
    ),
    ("AT&T Free Msg: Your AT&T code is 482913", Some("AT&T")),
    ("Your T-Mobile verification code is 4821", Some("T-Mobile")),
    ("Ihr Bestätigungscode für N26 lautet 482913.", Some("N26")),
    (
        "N26: Dein Bestätigungscode lautet 738201. Gib diesen Code niemals weiter.",
        Some("N26"),
    ),
    (
        "Nubank: Seu código de verificação é 4829. Não compartilhe com ninguém.",
        Some("Nubank"),
    ),
    (
        "Seu código de acesso ao Banco do Brasil é 482913",
        Some("Banco do Brasil"),
    ),
    (
        "[Banco Itaú - Aviso] Seu código de segurança é 482913",
        Some("Banco Itaú"),
    ),
    ("BBVA: Tu código de seguridad es 482913", Some("BBVA")),
    (
        "Código de verificación de Mercado Libre: 123456",
        Some("Mercado Libre"),
    ),
    (
        "Mercado Libre: Tu código de verificación es 739201. No lo compartas.",
        Some("Mercado Libre"),
    ),
    (
        "Crédit Agricole : votre code de sécurité est 48291037. Ce code est valable 5 minutes.",
        Some("Crédit Agricole"),
    ),
    (
        "Sparkasse: Ihre TAN für die Anmeldung lautet 739201.",
        Some("Sparkasse"),
    ),
    (
        "【中国银行】您的验证码为482913，5分钟内有效，请勿泄露。",
        Some("中国银行"),
    ),
    // Other services, several languages
    ("Votre code Doctolib est 123456", Some("Doctolib")),
    (
        "Votre code de vérification Leboncoin est : 482913",
        Some("Leboncoin"),
    ),
    ("Code de vérification Leboncoin : 482913", Some("Leboncoin")),
    ("Ameli : votre code de sécurité est 482913", Some("Ameli")),
    ("Votre code d'accès Ameli est 482913", Some("Ameli")),
    ("123456 ist dein Google-Bestätigungscode.", Some("Google")),
    ("Dein Zalando-Code lautet 482913.", Some("Zalando")),
    (
        "Kleinanzeigen: Dein Bestätigungscode lautet 482913",
        Some("Kleinanzeigen"),
    ),
    (
        "Il tuo codice di verifica Poste Italiane è 123456",
        Some("Poste Italiane"),
    ),
    ("Код подтверждения Яндекс: 1234", Some("Яндекс")),
    ("Yandex ID: код подтверждения 4821", Some("Yandex")),
    ("Amazon: Your code is 123456", Some("Amazon")),
    ("Netflix: Your verification code is 4821.", Some("Netflix")),
    ("Steam Guard code: F4K2P", Some("Steam Guard")),
    ("Slack confirmation code: ABC-123", Some("Slack")),
    ("Your Okta verification code is 482913", Some("Okta")),
    (
        "GitHub authentication code: 402918\n\n@github.com #402918",
        Some("GitHub"),
    ),
    // No name to be found
    ("Your verification code is 123456", None),
    ("123456 is your verification code. Do not share it.", None),
    ("Your code: 4821", None),
    ("Code: 482913", None),
    (
        "Your one-time passcode is 739204. It expires in 10 minutes.",
        None,
    ),
    ("Use 4821 to verify your account", None),
    ("Tu código de verificación es 123456", None),
    ("Seu código de verificação é 123456", None),
    ("Votre code de vérification est 123456", None),
    ("Ihr Bestätigungscode lautet 123456", None),
    ("Il tuo codice di verifica è 123456", None),
    ("Ваш код подтверждения: 1234", None),
    ("验证码：123456，5分钟内有效。", None),
    ("您的验证码是：482913", None),
    ("Dear customer, your OTP is 123456.", None),
    ("Hi Ana, your security code is 4821. Don't share it.", None),
    ("[Web발신] 인증번호 [482913]를 입력해주세요.", None),
    ("(1/2) Your code is 1234", None),
    ("Enter this code in your browser: 839201", None),
    ("Your Verification Code is 1234", None),
    ("Your New Login Code: 1234", None),
    ("Your 6-digit code is 482913", None),
    ("SMS code: 1234", None),
    ("Your OTP for login is 123456", None),
    ("Reminder: your appointment is tomorrow at 10:30.", None),
    ("Use code SAVE20 for 20% off your next order", None),
    ("Your code is KXQWPT. It expires soon.", None),
    (
        "Apple Account\n\nVerification code\n\nTo verify your email address, enter this code in \
         your browser.\n\n839201",
        None,
    ),
    ("https://example.com/verify?code=482913", None),
    ("Dear Ana: your code is 1234", None),
    ("رمز التحقق: 4821", None),
];
