//! Messages shaped like real ones, with the codes expected from each (none for the last part).
//! Add a row for every message the extractor gets wrong.

pub(super) const CORPUS: &[(&str, &[&str])] = &[
    // Google
    ("G-482913 is your Google verification code.", &["482913"]),
    (
        "Google Verification Code\n\nHi Ana,\n\nWe received a request to access your Google \
         Account ana.lopez@gmail.com through your email address. Your Google verification code \
         is:\n\n482913\n\nIf you did not request this code, it is possible that someone else is \
         trying to access the Google Account ana.lopez@gmail.com. Do not forward or give this \
         code to anyone.\n\nSincerely yours,\n\nThe Google Accounts team\n\n© 2026 Google LLC, \
         1600 Amphitheatre Parkway, Mountain View, CA 94043, USA",
        &["482913"],
    ),
    (
        "Your Google Voice verification code is 582-019. Don't share this code with anyone.",
        &["582019"],
    ),
    // Apple
    (
        "Your Apple Account code is: 739204. Don't share it with anyone.",
        &["739204"],
    ),
    (
        "Your Apple ID Code is: 551093. Don't share it with anyone.\n\n@apple.com #551093",
        &["551093"],
    ),
    (
        "Apple Account\n\nVerification code\n\nTo verify your email address, enter this code in \
         your browser.\n\n839201\n\nIf you didn't create an Apple Account using this email \
         address, please ignore this email.\n\nApple Account | Support | Privacy Policy\n\
         Copyright © 2026 Apple Inc. One Apple Park Way, Cupertino, CA 95014, United States. \
         All rights reserved.",
        &["839201"],
    ),
    // Microsoft
    ("Use 4821 as Microsoft account security code", &["4821"]),
    (
        "Microsoft account\n\nSecurity code\n\nPlease use the following security code for the \
         Microsoft account ca**@outlook.com.\n\nSecurity code: 5930\n\nIf you don't recognize \
         the Microsoft account ca**@outlook.com, you can click here to remove your email \
         address from that account.\n\nThanks,\nThe Microsoft account team",
        &["5930"],
    ),
    (
        "Your single-use code is: 73920415\n\nOnly enter this code on an official website or \
         app. Don't share it with anyone.",
        &["73920415"],
    ),
    ("Microsoft account security code: 0947", &["0947"]),
    // Amazon
    (
        "301945 is your Amazon OTP. Do not share it with anyone.",
        &["301945"],
    ),
    (
        "Amazon\n\nVerify your new Amazon account\n\nTo verify your email address, please use \
         the following One Time Password (OTP):\n\n720365\n\nDo not share this OTP with anyone. \
         Amazon takes your account security very seriously. Amazon Customer Service will never \
         ask you to disclose or verify your Amazon password, OTP, credit card, or banking \
         account number.\n\nThank you for shopping with us!\n\n© 1996-2026, Amazon.com, Inc. or \
         its affiliates",
        &["720365"],
    ),
    (
        "【Amazon】認証コード：482913。このコードを他人と共有しないでください。",
        &["482913"],
    ),
    // Ride hailing, delivery, travel
    (
        "Your Uber code: 4821. Never share this code. Reply STOP ALL to 89203 to unsubscribe.",
        &["4821"],
    ),
    (
        "Tu código de Uber es 7302. No lo compartas con nadie.",
        &["7302"],
    ),
    (
        "Seu código Uber é 4829. Nunca compartilhe este código.",
        &["4829"],
    ),
    ("Your Lyft code is 7219", &["7219"]),
    ("2026 is your Lyft code", &["2026"]),
    (
        "DoorDash: Your verification code is 528193. Reply STOP to unsubscribe.",
        &["528193"],
    ),
    (
        "Your Airbnb verification code is: 3920. Don't share this code with anyone; our \
         employees will never ask for the code.",
        &["3920"],
    ),
    ("Your Booking.com verification code is 582013", &["582013"]),
    (
        "Ton code BlaBlaCar : 4829. Il expire dans 10 minutes.",
        &["4829"],
    ),
    ("Tu código de BlaBlaCar es 5930", &["5930"]),
    // Airline confirmation codes look like verification codes and are typed the same way.
    ("Your flight confirmation code is QXR7K2.", &["QXR7K2"]),
    // Messaging and social
    (
        "Your WhatsApp code: 123-456\n\nYou can also tap on this link to verify your phone: \
         v.whatsapp.com/123456\n\nDon't share this code with others",
        &["123456"],
    ),
    (
        "Seu código do WhatsApp: 845-219\n\nVocê também pode tocar neste link para verificar \
         seu telefone: v.whatsapp.com/845219\n\nNão compartilhe este código com ninguém",
        &["845219"],
    ),
    (
        "Telegram code: 48213\n\nYou can also tap on this link to log in:\n\
         https://t.me/login/48213\n\nNever share this code with anyone.",
        &["48213"],
    ),
    (
        "Код подтверждения Telegram: 59302. Никому не давайте код, даже если его требуют от \
         имени Telegram!",
        &["59302"],
    ),
    ("FB-48213 is your Facebook confirmation code", &["48213"]),
    ("Use 392 018 to verify your Instagram account.", &["392018"]),
    (
        "482913 es tu código de verificación de Instagram.",
        &["482913"],
    ),
    ("Your X confirmation code is tq8x4kbm", &["tq8x4kbm"]),
    ("Your LinkedIn verification code is 834019.", &["834019"]),
    (
        "SIGNAL: Your code is: 582913 Do not share this code\n\ndoDFAHy8t3i",
        &["582913"],
    ),
    ("Your Discord verification code is: 829104", &["829104"]),
    (
        "Discord: 472910 is your Discord security code. Don't share this code with anyone.",
        &["472910"],
    ),
    (
        "【微信】验证码：482913，用于登录微信，5分钟内有效。如非本人操作，请忽略本短信。",
        &["482913"],
    ),
    (
        "[WeChat] Verification code: 5829. This code is used to log in to WeChat on a new \
         device. Do not forward it.",
        &["5829"],
    ),
    ("【LINE】您的驗證碼為 582013。", &["582013"]),
    ("LINEの認証番号は5829です。", &["5829"]),
    (
        "[Web발신]\n[카카오] 인증번호 [482913]를 입력해주세요.",
        &["482913"],
    ),
    ("[네이버] 인증번호 [5829]를 입력해 주세요.", &["5829"]),
    // Payments, banks, fintech
    (
        "PayPal: Your security code is 638201. Your code expires in 10 minutes. Please don't \
         reply.",
        &["638201"],
    ),
    (
        "PayPal\n\nHere's your one-time code\n\nEnter this code to confirm it's you: 902184\n\n\
         This code expires in 10 minutes. If you didn't ask for a code, please contact us.\n\n\
         PayPal Pte. Ltd. 5 Temasek Boulevard #09-01, Suntec Tower Five, Singapore 038985",
        &["902184"],
    ),
    (
        "Chase: Your one-time code is 73920184. Don't share it. We'll never call you to ask for \
         it. Reply STOP to opt out.",
        &["73920184"],
    ),
    (
        "BofA: DO NOT share this code. We will NEVER call you or text you for it. Code 482910. \
         Reply HELP if you didn't request it.",
        &["482910"],
    ),
    (
        "Wells Fargo: Your verification code is 5521. If you didn't request this, call \
         1-800-869-3557.",
        &["5521"],
    ),
    (
        "HSBC: Use OTP 582910 to approve your payment of GBP 1,299.00 to AMAZON UK with card \
         ending 4821. Do not share this code.",
        &["582910"],
    ),
    (
        "482913 is OTP for txn of INR 12,500.00 at AMAZON on HDFC Bank card ending 1234. Valid \
         till 12:30. Do not share OTP for security reasons.",
        &["482913"],
    ),
    (
        "Your Stripe verification code is: 320-918. Don't share this code with anyone; our \
         employees will never ask for the code.",
        &["320918"],
    ),
    (
        "Link\n\nYour Link verification code\n\nEnter the code below to log in to Link:\n\n\
         530218\n\nThis code expires in 10 minutes.\n\nStripe, 354 Oyster Point Blvd, South San \
         Francisco, CA 94080",
        &["530218"],
    ),
    (
        "Your Coinbase verification code is: 7219043. Don't share this code with anyone.",
        &["7219043"],
    ),
    (
        "[Binance] Verification Code\n\nVerification Code: 902817\n\nThe verification code will \
         be valid for 30 minutes. Please do not share this code with anyone.\n\nDon't recognize \
         this activity? Please reset your password and contact customer support immediately.\n\n\
         This is an automated message, please do not reply.\n\n© 2017 - 2026 Binance.com, All \
         Rights Reserved.",
        &["902817"],
    ),
    (
        "Revolut code: 482-913. Do not share this code with anyone, including Revolut \
         employees.",
        &["482913"],
    ),
    (
        "N26: Dein Bestätigungscode lautet 738201. Gib diesen Code niemals weiter.",
        &["738201"],
    ),
    (
        "Your N26 code: 5820. Never share it with anyone, not even N26 employees.",
        &["5820"],
    ),
    (
        "Nubank: Seu código de verificação é 4829. Não compartilhe com ninguém.",
        &["4829"],
    ),
    (
        "Olá, Maria\n\nUse o código abaixo para confirmar seu acesso:\n\n582 019\n\nEsse código \
         expira em 15 minutos.\n\nNu Pagamentos S.A. - Instituição de Pagamento\nCNPJ \
         18.236.120/0001-58\nRua Capote Valente, 39 - São Paulo - SP - 05409-000",
        &["582019"],
    ),
    (
        "Mercado Libre: Tu código de verificación es 739201. No lo compartas.",
        &["739201"],
    ),
    (
        "Código de seguridad: 8412\n\nNo compartas este código con nadie.\n\nMercado Pago | Av. \
         Caseros 3039, Piso 2, CP 1264, Ciudad Autónoma de Buenos Aires",
        &["8412"],
    ),
    (
        "BBVA: La clave de operación es 482913. No la compartas con nadie.",
        &["482913"],
    ),
    (
        "Santander: Tu código de seguridad es 5830. Si no reconoces esta operación llama al 55 \
         5169 4300.",
        &["5830"],
    ),
    ("Tu clave de acceso es 5830", &["5830"]),
    (
        "Itaú: seu código de segurança é 482913. Não informe a ninguém.",
        &["482913"],
    ),
    (
        "CAIXA: Seu codigo de acesso e 482913. Nao compartilhe.",
        &["482913"],
    ),
    (
        "Votre code de vérification est 738201. Ne le communiquez à personne.",
        &["738201"],
    ),
    (
        "Crédit Agricole : votre code de sécurité est 48291037. Ce code est valable 5 minutes.",
        &["48291037"],
    ),
    (
        "BNP Paribas : votre mot de passe à usage unique est 582019",
        &["582019"],
    ),
    (
        "Ihr Sicherheitscode lautet 482913. Bitte geben Sie diesen Code nicht weiter.",
        &["482913"],
    ),
    (
        "Ihre mTAN für die Überweisung von 120,00 EUR an DE89 3704 0044 0532 0130 00 lautet: \
         482913",
        &["482913"],
    ),
    (
        "Sparkasse: Ihre TAN für die Anmeldung lautet 739201. Geben Sie die TAN niemals weiter.",
        &["739201"],
    ),
    ("Dein Anmeldecode für Zalando: 5821", &["5821"]),
    (
        "【支付宝】校验码1234，您正在进行支付宝账户验证，请勿泄露给他人。",
        &["1234"],
    ),
    (
        "【招商银行】您尾号6688的卡正在进行网上支付，动态码为529104，请勿泄露。",
        &["529104"],
    ),
    (
        "Код: 4829. Никому не сообщайте код, даже сотруднику банка. Сбербанк",
        &["4829"],
    ),
    (
        "PosteID: il codice di sicurezza per accedere è 5821",
        &["5821"],
    ),
    // Developer tools and other services
    (
        "Hey octocat!\n\nA sign in attempt requires further verification because we did not \
         recognize your device. To complete the sign in, enter the verification code on the \
         unrecognized device.\n\nDevice: Chrome on Linux\nVerification code: 731905\n\nIf you \
         did not attempt to sign in to your account, your password may be compromised. Visit \
         https://github.com/settings/security to create a new, strong password for your GitHub \
         account.\n\nThanks,\nThe GitHub Team",
        &["731905"],
    ),
    (
        "GitHub authentication code: 402918\n\n@github.com #402918",
        &["402918"],
    ),
    (
        "Confirm your email address\n\nYour confirmation code is below — enter it in your open \
         browser window and we'll help you get signed in.\n\nQ7X-4KP\n\nIf you didn't request \
         this email, there's nothing to worry about — you can safely ignore it.\n\nSlack \
         Technologies, LLC, 500 Howard Street, San Francisco, CA 94105",
        &["Q7X4KP"],
    ),
    (
        "Dear ana_l,\n\nHere is the Steam Guard code you need to login to account ana_l:\n\n\
         F4K9D\n\nThis email was generated because of a login attempt from a web or mobile \
         device located at 203.0.113.42 (AR).\n\nThe Steam Guard code is required to complete \
         the login. No one can access your account without also accessing this email.\n\nValve \
         Corporation\nPO Box 1688\nBellevue, WA 98009",
        &["F4K9D"],
    ),
    ("Epic Games: Your security code is 482913", &["482913"]),
    ("Your Spotify code is 582913", &["582913"]),
    (
        "Netflix: Your code is 4829. Don't share it. Expires in 15 minutes.",
        &["4829"],
    ),
    ("Your Okta verification code is 582910", &["582910"]),
    ("Your Acme verification code is: 5829", &["5829"]),
    // A meeting passcode is typed like a code, so it counts as one.
    (
        "Join Zoom Meeting\nhttps://us02web.zoom.us/j/81234567890?pwd=abc\n\nMeeting ID: 812 \
         3456 7890\nPasscode: 482913",
        &["482913"],
    ),
    // Chinese and Japanese without spaces
    ("您的验证码是738291，请在10分钟内完成验证。", &["738291"]),
    ("【淘宝】您的验证码为 483920，请勿告诉他人。", &["483920"]),
    (
        "【京东】验证码：8841，您正在登录京东账号，切勿转发或告知他人。",
        &["8841"],
    ),
    ("123456是您的验证码，请勿泄露。", &["123456"]),
    ("Yahoo! JAPAN 確認コード：482913", &["482913"]),
    (
        "Ваш код подтверждения: 582913. Наберите его в поле ввода.",
        &["582913"],
    ),
    (
        "Il tuo codice di verifica è 482913. Non condividerlo con nessuno.",
        &["482913"],
    ),
    // Shapes
    ("Your code is 48 29 13", &["482913"]),
    (
        "Security code: 4829 1357. Valid for 5 minutes.",
        &["48291357"],
    ),
    ("Your verification code is A7B2KQ", &["A7B2KQ"]),
    ("Enter code X9-K2P to continue", &["X9K2P"]),
    ("Your code is 2026", &["2026"]),
    (
        "Your sign-in code is 4829. Backup code: 73920418",
        &["4829", "73920418"],
    ),
    // A phrase ending in a colon names the code after it, however long the phrase
    (
        "Here is the code you asked for to sign in to Figma: H7K2QX",
        &["H7K2QX"],
    ),
    (
        "Your one-time sign-in code for the Nintendo app is: XK3-9P2",
        &["XK39P2"],
    ),
    (
        "Notion\n\nYour temporary login code to sign in on a new device:\n\nkq7x-29mf\n\nThis \
         code expires in 10 minutes.",
        &["kq7x29mf"],
    ),
    (
        "Your X login code for @ana_lopez is: tq8x4kbm",
        &["tq8x4kbm"],
    ),
    ("Tu código para entrar en Cabify: K7Q2XM", &["K7Q2XM"]),
    ("Dein Code zur Anmeldung bei Zalando: 7HJ3KQ", &["7HJ3KQ"]),
    // Sums of money around a code: never codes, and no bar between a code and its keyword
    (
        "Use 847261 to approve the amount of $1,250.00 to Alex M. Never share this code.",
        &["847261"],
    ),
    (
        "482913 is OTP for Rs2500 txn at Swiggy. Do not share it with anyone.",
        &["482913"],
    ),
    (
        "【支付宝】4829是您付款¥1,250.00的验证码，请勿泄露。",
        &["4829"],
    ),
    (
        "Enter 582931 to confirm the total of $49.99 at Apple.com. The code expires in 5 \
         minutes.",
        &["582931"],
    ),
    ("Cash App: 4829 ($25.00 to Alex) is your code.", &["4829"]),
    (
        "Your Venmo code for the $25.00 payment to Alex is 4829.",
        &["4829"],
    ),
    (
        "Код 4829 для перевода 250 000 р. Никому не сообщайте.",
        &["4829"],
    ),
    (
        "Your OTP is 7521. Rs.2,500.00 will be debited from A/c XX1234 on 22-11-26.",
        &["7521"],
    ),
    (
        "Your Wise code is 482913. EUR 25.00 is on its way to Alex.",
        &["482913"],
    ),
    // The origin-bound line browsers fill codes from, alone or under a sentence without one
    ("Sign in to Acme Cloud.\n\n@acme.cloud #K7Q2XM", &["K7Q2XM"]),
    (
        "Use this to finish signing in to Figma.\n\n@figma.com #482913",
        &["482913"],
    ),
    (
        "Confirm your purchase on Shop Pay.\n\n@shop.app #7302 %store.example",
        &["7302"],
    ),
    (
        "Ihr Anmeldecode für Beispiel:\r\n\r\n@beispiel.de #H7K2QX\r\n",
        &["H7K2QX"],
    ),
    (
        "Approve the sign-in from Chrome on Windows 11 (build 226315).\n\n@acme.com #5829",
        &["5829"],
    ),
    (
        "Your Acme sign-in link\nHi Ana, tap the link or enter the code in the Acme app.\n\n\
         @app.acme.com #a7k9qx",
        &["a7k9qx"],
    ),
    // A validity after the code: it marks a code, and its times and dates are none
    (
        "Bolt: 4829 (valid until 14:35) is your login code.",
        &["4829"],
    ),
    ("Use 4829 within 10 minutes to sign in to Acme.", &["4829"]),
    ("Your Acme login: 5839 (expires in 10 min)", &["5839"]),
    (
        "Ingresa 4829 para continuar, válido por 10 minutos.",
        &["4829"],
    ),
    (
        "Gib 4829 innerhalb von 10 Minuten ein, um dich anzumelden.",
        &["4829"],
    ),
    (
        "Hi Ana,\n\nEnter 48291 within the next 15 minutes to finish signing in.\n\nThe \
         Acme team",
        &["48291"],
    ),
    ("Your Acme code 4829 expires at 1045 today.", &["4829"]),
    (
        "OTP 4829 valid till 22NOV26 14:35. Do not share.",
        &["4829"],
    ),
    ("Code 4829 valid until 22-11-26.", &["4829"]),
    // Email bodies with footers, dates and phone numbers around the code
    (
        "Hi Sam,\n\nYour one-time passcode is 382019.\n\nIt expires in 10 minutes. If you did \
         not request it, call us at (415) 555-0100.\n\nAcme Corp, 100 Market St, San Francisco, \
         CA 94105\n© 2026 Acme Corp. All rights reserved.",
        &["382019"],
    ),
    (
        "Subject: 482913 is your verification code\n\nHi,\n\nUse the code 482913 to sign in.\n",
        &["482913"],
    ),
    (
        "Dear customer,\n\nYour PIN for online banking activation is:\n\n4829\n\nFor help, call \
         0800 123 456 (Mon–Fri 9:00–17:00).\n\nAcme Bank plc, 1 Churchill Place, London E14 5HP",
        &["4829"],
    ),
    ("Your code 7392 expires on Nov 22 2026 at 12:30.", &["7392"]),
    ("Tu código es 7392. Pedido 12345678 confirmado.", &["7392"]),
    (
        "Hi Ana, we received a request to sign in to your account from a new device. To \
         continue, enter the following verification code in the app within the next 10 \
         minutes.\n\n  482913\n\nIf you didn't try to sign in, change your password.",
        &["482913"],
    ),
    // A colon closes a phrase opened by "code", however long, whatever it names on the way
    // ("account", "device", "phone"), in any language
    (
        "Use this code to finish signing in to Acme:  K7P2QX",
        &["K7P2QX"],
    ),
    (
        "Code to verify your new device on Example: 9HX4TZ",
        &["9HX4TZ"],
    ),
    (
        "Your code to sign in to your Acme account on the web: R4T8WQ",
        &["R4T8WQ"],
    ),
    (
        "Here's the code you'll need to confirm your email address with Shopify: 7KQ2MX",
        &["7KQ2MX"],
    ),
    (
        "Use this one-time code to log in to the Acme Cloud console from your new device: \
         X7K-2QP",
        &["X7K2QP"],
    ),
    (
        "Code to approve the sign-in — Acme Web, Chrome on macOS: 9PX3KT",
        &["9PX3KT"],
    ),
    (
        "Hi Ana! Use this code to verify your phone number on Acme: 6QK3XR",
        &["6QK3XR"],
    ),
    (
        "Code to link your Acme card ending 4821 to Apple Pay: 7QX4KM",
        &["7QX4KM"],
    ),
    (
        "Code to unlock your Acme account, requested at 14:35 from Berlin:\n\nT7K2QX\n\nIt \
         expires in 10 minutes.",
        &["T7K2QX"],
    ),
    (
        "Code to confirm your order of $49.99 at Acme Store: 8QK2TX",
        &["8QK2TX"],
    ),
    (
        "Código para confirmar tu cuenta de Cabify：K7Q2XM",
        &["K7Q2XM"],
    ),
    (
        "Tu código para iniciar sesión en Mercado Libre desde un nuevo dispositivo: 4HT9QZ",
        &["4HT9QZ"],
    ),
    (
        "Votre code pour vous connecter à votre compte Acme : Q8R2TZ",
        &["Q8R2TZ"],
    ),
    (
        "Dein Code zum Bestätigen deiner neuen E-Mail-Adresse bei Zalando:\u{a0}H3KQ7W",
        &["H3KQ7W"],
    ),
    (
        "Seu código para acessar sua conta Nubank no novo celular: 7XK29Q",
        &["7XK29Q"],
    ),
    (
        "Codice per accedere al tuo account Poste dal nuovo dispositivo: K7P2QX",
        &["K7P2QX"],
    ),
    ("验证码用于在新设备上登录您的Acme账户：K7P2QX", &["K7P2QX"]),
    (
        "Le code pour valider votre nouvel appareil sur Acme.fr：T4K9QX",
        &["T4K9QX"],
    ),
    (
        "Il codice per verificare il tuo numero di telefono su Acme: 7XQ4KT",
        &["7XQ4KT"],
    ),
    (
        "Code to authorise the card payment of EUR 49,99 at ACME on 28.11.2026: K2Q7XM",
        &["K2Q7XM"],
    ),
    // A code opening its sentence after a salutation, named by what it "is", with sums, dates
    // and times after it
    (
        "Dear Customer, 482913 is the OTP for your transaction of INR 2,500.00 at AMAZON on \
         28-11-2026 14:35. Valid for 10 mins. Do not share it with anyone.",
        &["482913"],
    ),
    ("Hi Sam, 7731 is your code for Acme.", &["7731"]),
    (
        "Hello! 66A2KX is the one-time password for your Acme account.",
        &["66A2KX"],
    ),
    (
        "Dear Cardholder, 5821 is the OTP for your purchase of USD 149.99 at BEST BUY on \
         11/28/2026 at 14:35. Do not share it.",
        &["5821"],
    ),
    (
        "Dear Valued Member, 73920 is your one-time PIN for the payment of EUR 1.250,00 to ACME \
         GMBH at 09:15. Valid 5 minutes.",
        &["73920"],
    ),
    (
        "Dear Account Holder, 4829 is the OTP to authorise a debit of Rs. 12,500.00 on 28-11-26 \
         at 14:35 IST.",
        &["4829"],
    ),
    (
        "Hi Ana, 8KX2QF is the verification code for your Acme login at 14:35 today.",
        &["8KX2QF"],
    ),
    (
        "Dear Customer,\n\n6604 is the OTP for your transaction of INR 12,500.00 at FLIPKART on \
         28-11-2026 14:35. Valid for 10 mins. Do not share it with anyone.\n\nRegards,\nHDFC \
         Bank",
        &["6604"],
    ),
    (
        "Dear Customer, A7K29Q is the OTP for your transfer of GBP 250.00 to J SMITH on 28 Nov \
         at 14:35.",
        &["A7K29Q"],
    ),
    (
        "Hey Sam — 48213 is your Acme login code. It expires at 14:35.",
        &["48213"],
    ),
    (
        "Hi there! 9QX4KT is your Acme two-factor authentication code.",
        &["9QX4KT"],
    ),
    (
        "Hola Ana, 4829 es tu código para el pago de $ 1.250,00 en MERCADO LIBRE el 28/11/2026 \
         a las 14:35.",
        &["4829"],
    ),
    (
        "Estimado cliente, 4829 es la clave de un solo uso para su compra de MXN 1,250.00 en \
         LIVERPOOL el 28/11/2026 a las 14:35.",
        &["4829"],
    ),
    (
        "Olá Maria! 5839 é o código para a compra de R$ 2.500,00 na AMAZON em 28/11/2026 às \
         14:35.",
        &["5839"],
    ),
    (
        "Bonjour Marie, 7319 est le code pour votre paiement de 49,99 € chez FNAC le 28/11/2026 \
         à 14h35.",
        &["7319"],
    ),
    (
        "Hallo Jonas, 4829 ist dein Code für die Zahlung über 129,99 EUR bei Zalando am \
         28.11.2026 um 14:35 Uhr.",
        &["4829"],
    ),
    (
        "尊敬的客户，4829是您本次交易人民币2,500.00元的动态码，14:35前有效。",
        &["4829"],
    ),
    (
        "Dear Client, 7HX2K9 is your one-time passcode for Acme Bank.",
        &["7HX2K9"],
    ),
    (
        "Liebe Kundin, 4829 ist Ihre TAN für die Überweisung von 250,00 EUR am 28.11.2026 um \
         14:35.",
        &["4829"],
    ),
    (
        "Chère cliente, 5821 est votre code de sécurité pour l'achat de 129,00 € le 28/11 à \
         14h35.",
        &["5821"],
    ),
    // The origin-bound code ending a line of text, not on a line of its own
    (
        "Your Example code is 123456. @example.com #123456",
        &["123456"],
    ),
    ("@example.com #123456", &["123456"]),
    ("Use 4821 to sign in @app.example.com #4821", &["4821"]),
    ("Use 4821 to sign in @app.example.com #4821\n", &["4821"]),
    ("Sign in to Acme @acme.com #K7Q2XM", &["K7Q2XM"]),
    (
        "Confirm your purchase on Shop Pay @shop.app #7302 %store.example",
        &["7302"],
    ),
    (
        "Use 4821 to sign in. @app.example.com #4821 @pay.example.net",
        &["4821"],
    ),
    (
        "Approve the sign-in from Chrome on Windows 11 (build 226315) @acme.com #5829",
        &["5829"],
    ),
    (
        "Ihr Anmeldecode für Beispiel @beispiel.de #H7K2QX",
        &["H7K2QX"],
    ),
    ("Votre connexion à Acme : @acme.fr #48213", &["48213"]),
    ("Your Acme code is 4821.\u{a0}@acme.com #4821", &["4821"]),
    (
        "Sign in on a new device — @login.acme.co.uk #X7-K2P",
        &["X7K2P"],
    ),
    (
        "Use this to finish signing in to Figma! @figma.com #a7k9qx",
        &["a7k9qx"],
    ),
    ("Confirma tu acceso a Cabify @cabify.com #5830", &["5830"]),
    ("您正在登录淘宝 @taobao.com #4829", &["4829"]),
    (
        "Hi Ana,\nUse 4821 to sign in to Acme. @acme.com #4821",
        &["4821"],
    ),
    (
        "Your one-time code is KQ7X2M @accounts.acme.com #KQ7X2M",
        &["KQ7X2M"],
    ),
    ("Acme: use 5839 to sign in @acme.com #5839", &["5839"]),
    // An instruction to type a code, then a time it expires at: in its sentence or the next
    (
        "Please enter 583920 on the sign-in page. It expires at 14:35.",
        &["583920"],
    ),
    ("Enter K2M9PX on example.com before 09:30 UTC", &["K2M9PX"]),
    (
        "Please enter 5839 on the sign-in page. It expires at 14:35.",
        &["5839"],
    ),
    ("Type 48213 in the Acme app before 18:00 today.", &["48213"]),
    (
        "Use 7HJ3KQ on acme.com to finish signing in. Expires at 09:30.",
        &["7HJ3KQ"],
    ),
    (
        "Enter 4829 on the checkout page to approve your payment of $25.00. It expires at 14:35 \
         (UTC).",
        &["4829"],
    ),
    (
        "Please enter\u{a0}4829 on the sign-in page — it expires at 14:35!",
        &["4829"],
    ),
    (
        "Enter 4829 on the sign-in page.\nIt expires at 14:35.",
        &["4829"],
    ),
    ("Type X7K2QP into the Acme app by 23:59.", &["X7K2QP"]),
    (
        "Use 5839 to confirm your email. This expires at 6:45 PM.",
        &["5839"],
    ),
    (
        "Enter 385 920 on the sign-in page before 14:35.",
        &["385920"],
    ),
    (
        "Ingresa 4829 en la página de inicio de sesión. Vence a las 14:35.",
        &["4829"],
    ),
    (
        "Introduce K7P2QX en acme.es antes de las 09:30.",
        &["K7P2QX"],
    ),
    (
        "Digite 5839 na página de login. Expira às 14:35.",
        &["5839"],
    ),
    (
        "Saisissez 4829 sur la page de connexion. Il expire à 14:35.",
        &["4829"],
    ),
    ("Entrez K2M9PX sur acme.fr avant 09:30 !", &["K2M9PX"]),
    (
        "Bitte gib 4829 auf der Anmeldeseite ein. Gültig bis 14:35 Uhr.",
        &["4829"],
    ),
    (
        "Geben Sie 73920 auf der Anmeldeseite ein. Gültig bis 09:30 Uhr.",
        &["73920"],
    ),
    (
        "Inserisci 5839 nella pagina di accesso. Scade alle 14:35.",
        &["5839"],
    ),
    ("Use K7X2QP to log in before 14:35 today!", &["K7X2QP"]),
    (
        "Introduzca 4829 en la web de su banco antes de las 14:35.",
        &["4829"],
    ),
    ("Insira 5839 no aplicativo até 14:35.", &["5839"]),
    ("Veuillez saisir 5839 sur le site avant 14h35.", &["5839"]),
    (
        "Bitte geben Sie 4829 in der App ein. Der Code ist bis 14:35 Uhr gültig.",
        &["4829"],
    ),
    // No code
    (
        "UPS Update: Your package is on its way.\n\nTracking Number: 1Z999AA10123456784\n\
         Scheduled Delivery: Thursday, 11/26/2026, by 8:00 PM\n\nUPS, 55 Glenlake Parkway NE, \
         Atlanta, GA 30328",
        &[],
    ),
    (
        "USPS: Your item 9400 1000 0000 0000 0000 00 was delivered at 2:14 pm on November 22, \
         2026 in BROOKLYN, NY 11201.",
        &[],
    ),
    (
        "Your Amazon order #113-4827193-5568231 has shipped. Track your package: \
         https://amzn.to/3xYz123\nArriving Tuesday, Nov 24.",
        &[],
    ),
    (
        "DHL: Ihre Sendung 00340434161094042557 wird heute zwischen 10:00 und 14:00 Uhr \
         zugestellt.",
        &[],
    ),
    (
        "Correios: Seu objeto NL123456789BR saiu para entrega. Acompanhe em \
         www.correios.com.br",
        &[],
    ),
    (
        "Thanks for your order!\n\nOrder #12345678\nDate: Nov 22, 2026\n\n2x Coffee beans   \
         $25.98\nShipping   $4.99\nTax   $2.31\nTotal   $33.28\n\nPaid with Visa ending in 4242.",
        &[],
    ),
    (
        "Receipt from Acme Inc. $1,299.00 Paid November 22, 2026\n\nReceipt number 2048-5521\n\
         Invoice number ABCD1234-0001\nPayment method Visa - 4242",
        &[],
    ),
    (
        "Invitation: Weekly sync @ Tue Nov 24, 2026 10:00 – 10:30 (PST)\n\nJoin with Google \
         Meet: meet.google.com/abc-defg-hij\nJoin by phone: +1 401-555-0123 PIN: 123 456 789#",
        &[],
    ),
    (
        "Reminder: Dentist appointment on 2026-11-22 at 09:15:00. Reply C to confirm or call \
         555-0100.",
        &[],
    ),
    (
        "BIG SALE! Save 30% on all items until Nov 30. Call 1-800-555-0199 or visit \
         www.example.com. Since 1998. © 2026 Example Inc. Text STOP to 78901 to opt out.",
        &[],
    ),
    (
        "Chase: Your available balance in account ending 1234 is $12,345.67 as of 11/22/2026.",
        &[],
    ),
    (
        "Itaú: Compra aprovada no cartão final 4821, valor R$ 1.299,00 em 22/11/2026 às 14:32, \
         AMAZON BR.",
        &[],
    ),
    (
        "【工商银行】您尾号1234卡11月22日14:30支出(消费)1299.00元，余额12345.67元。",
        &[],
    ),
    (
        "【顺丰速运】您的快件SF1234567890123已签收，感谢使用顺丰，客服电话95338。",
        &[],
    ),
    (
        "【菜鸟驿站】您的包裹已到站，凭取件码3-2-1006到驿站取件。",
        &[],
    ),
    (
        "¡Oferta! 2x1 en pizzas hasta el 30 de noviembre de 2026. Llámanos al 900 123 456. \
         Código promocional: PIZZA2X1",
        &[],
    ),
    (
        "Ihre Rechnung Nr. 20261122 vom 22.11.2026 über 49,99 EUR ist fällig. Kundennummer: \
         4455667",
        &[],
    ),
    (
        "Votre colis 6A12345678901 sera livré le 24/11/2026 entre 9h et 13h. Suivi : \
         https://www.laposte.fr/suivi",
        &[],
    ),
    (
        "Your flight UA 1234 departs Nov 24, 2026 at 07:45 from gate B12. Booking reference: \
         QXR7K2.",
        &[],
    ),
    (
        "Meeting ID: 812 3456 7890\nOne tap mobile: +16465588656,,81234567890#",
        &[],
    ),
    (
        "Acme Weekly — Issue 2026/47\n\nWe shipped 12 features this week and crossed 1,000,000 \
         users!\n\nAcme Inc., 548 Market St #12345, San Francisco, CA 94104-5401\nUnsubscribe",
        &[],
    ),
    (
        "We received a request to reset your password. Click the link below to choose a new \
         one:\nhttps://example.com/reset?token=8f3a9c2b7d&uid=482913\n\nThis link expires in \
         24 hours.",
        &[],
    ),
    (
        "Call us today at 020 7946 0958 or +44 20 7946 0958. Offer ends 31/12/2026.",
        &[],
    ),
    (
        "Santander: Transferencia recibida por $ 25.000 de JUAN PEREZ a tu cuenta 1234567. \
         Saldo disponible: $ 1.234.567",
        &[],
    ),
    (
        "Заказ № 12345678 передан в доставку. Трек-номер: RA123456789RU.",
        &[],
    ),
    (
        "【ヤマト運輸】お荷物（伝票番号：4829-1357-2046）は本日配達予定です。",
        &[],
    ),
    (
        "Pedido 1234567 confirmado! Total: R$ 89,90. Previsão de entrega: 25/11/2026.",
        &[],
    ),
    (
        "Your order to buy 0.5 ETH at 2,450.00 USD was filled. Order ID 98765432.",
        &[],
    ),
    (
        "Happy New Year 2026! Use promo code SAVE20 at checkout until January 15.",
        &[],
    ),
    (
        "Your reservation is confirmed. Confirmation number: 48291357. Check-in: Nov 24, 2026 \
         after 3:00 PM.",
        &[],
    ),
    (
        "Your order ships to 94105. Estimated delivery: 3-5 business days.",
        &[],
    ),
    (
        "You turned on two-step verification for your account on Nov 22, 2026. If this wasn't \
         you, call +1 415 555 0100.",
        &[],
    ),
    (
        "Your weekly summary: 12500 steps, 2300 kcal, 8 hours of sleep. Keep it up in 2026!",
        &[],
    ),
    (
        "Votre facture n° 20264471 d'un montant de 1 299,00 € est disponible. Service client : \
         01 23 45 67 89.",
        &[],
    ),
    (
        "Guten Tag, Ihre Bestellnummer 48291357 wurde am 22. November 2026 versandt. Ihre \
         Sendungsnummer lautet 00340434161094042557.",
        &[],
    ),
    (
        "Use the discount code below at checkout:\n\nSUMMER25\n\nValid until Nov 30.",
        &[],
    ),
    ("Error code from the payment terminal: E40412", &[]),
    ("If you did not request a code, call us: 5550100", &[]),
    (
        "Updated code of conduct for all members, version: v2026b",
        &[],
    ),
    ("Referral code for your friends: ANA2026", &[]),
    (
        "Venmo: You paid Alex K. $1,250.00. Your balance is $48.91. Payment ID 4829135.",
        &[],
    ),
    (
        "Payment of INR5000 to Swiggy successful. Txn ID 48291357.",
        &[],
    ),
    (
        "Klarna: Your purchase of 129,99 € at Zalando is confirmed. Amount due on 22.12.2026: \
         43,33 €.",
        &[],
    ),
    ("Follow us on Instagram!\n@acmestore #Summer26", &[]),
    ("Questions? Write to help@acme.com #4821", &[]),
    ("See you at the summit!\n\n@acme.events #AcmeSummit", &[]),
    (
        "Your parking session in zone 4829 expires in 15 minutes. Extend it in the app.",
        &[],
    ),
    ("Bus 4829 arrives within 5 minutes.", &[]),
    ("Your driver, plate 4829, arrives within 3 minutes.", &[]),
    ("Your appointment at 1430 starts in 15 minutes.", &[]),
    ("Flash sale: SAVE20 for the next 30 minutes only!", &[]),
    // Near the colon phrases: the phrase names something else, or "code" is in another clause
    (
        "Your code to sign in is on its way, but first confirm your trip, booking reference: \
         QXR7K2",
        &[],
    ),
    (
        "Didn't ask for a code? Reach our team by phone: 5550100",
        &[],
    ),
    (
        "If you didn't ask for a code, reply to this text with your account number: 48213",
        &[],
    ),
    ("Promo code to use at checkout for 20% off: SAVE20X", &[]),
    ("Tracking code for your parcel to Lisbon: AB12CD34", &[]),
    (
        "Use this link to finish signing in to Acme: https://acme.com/login/K7P2QX",
        &[],
    ),
    (
        "Error code shown on the payment terminal at 14:35: E40412",
        &[],
    ),
    (
        "Gutscheincode für deine nächste Bestellung bei Zalando: SOMMER25",
        &[],
    ),
    (
        "Código de seguimiento de tu pedido en Mercado Libre: MLB7K2Q9",
        &[],
    ),
    ("Questions about your order? Call our team at: 5550100", &[]),
    (
        "Your code was sent. If this wasn't you, write down your case number: 48213",
        &[],
    ),
    // Near the salutations: a number opening a sentence that is something else
    (
        "Dear Customer, 4829 is the last four digits of the card used for your transaction of \
         INR 2,500.00 at AMAZON on 28-11-2026 14:35.",
        &[],
    ),
    (
        "Hi Sam, 4829 is your order number for the pickup at 14:35 today.",
        &[],
    ),
    (
        "Dear Customer, 48291357 is the reference for your transfer of EUR 250.00 on 28.11.2026 \
         at 14:35.",
        &[],
    ),
    (
        "Hello! 2026 is the year of two-factor authentication at Acme.",
        &[],
    ),
    (
        "Hello! 2026 is the year two-factor authentication became the default at Acme.",
        &[],
    ),
    (
        "Dear Member, 12500 is the number of points you earned this year.",
        &[],
    ),
    (
        "Dear Customer, 2500 is the amount debited for your OTP request at 14:35.",
        &[],
    ),
    (
        "Hi Sam, 4829 is the room number for your stay; check-in code sent separately.",
        &[],
    ),
    ("Your order, 12345678, has shipped.", &[]),
    (
        "Dear Customer, INR 2,500.00 was debited from your account XX1234 on 28-11-2026 14:35. \
         Call 1800 202 6161 if this was not you.",
        &[],
    ),
    // Near the origin-bound ending: an address, a handle, a hashtag, a code not at the end
    ("Contact @acme.com #4821 for help with your order.", &[]),
    ("Thanks for shopping with us @acmestore #Summer26", &[]),
    ("Order #48213 shipped from @shop.example.com", &[]),
    ("Ticket #4821 was updated by support@acme.com", &[]),
    ("Meet the team at @acme.events #Summit 2026", &[]),
    ("Reply to @acme.com #4821 to confirm", &[]),
    ("Contact us: support@acme.com #48213", &[]),
    ("Follow us for more deals @acme.shop #Deals2026", &[]),
    // Near the instructions: no code after the verb, a promo code, a unit, a blocker, a year
    (
        "Use SAVE20 at checkout before 23:59 tonight for 20% off!",
        &[],
    ),
    ("Enter SUMMER25 at checkout. Offer expires at 23:59.", &[]),
    (
        "Please enter gate B12 before 09:30. Boarding closes at 09:45.",
        &[],
    ),
    (
        "Call 5550100 before 17:00 to confirm your appointment.",
        &[],
    ),
    (
        "Enter your order number 48213 on the returns page before 14:35.",
        &[],
    ),
    ("Use 1500 points on your next order before 23:59.", &[]),
    ("Type 2026 in the year field before 14:35.", &[]),
    ("Use the 4829 entrance on Main St before 09:00.", &[]),
    (
        "Your parcel 48213 is at the locker. Collect it before 14:35.",
        &[],
    ),
    (
        "Enter 1234 Main Street in the app and arrive before 14:35.",
        &[],
    ),
    (
        "Enter 48213 Sunset Blvd into your GPS and arrive before 14:35.",
        &[],
    ),
    (
        "Enter FALL50 at checkout before midnight on 28.11. Offer ends at 23:59.",
        &[],
    ),
    ("Tu pedido 48213 llegará antes de las 14:35.", &[]),
    ("Votre colis 48213 sera livré avant 14h35.", &[]),
    ("Ihre Bestellung 48213 wird bis 14:35 Uhr geliefert.", &[]),
];
