//! Session invitations: one channel each, sent with the session's token.

use secrecy::ExposeSecret;
use video_session_client::types;

use super::call_experience::CallExperience;
use super::client::{OP_INVITATION, VideoSessionClient, rejected, transport_error};
use super::error::{Error, ValidationError};
use super::invitation::{Invitation, SessionId, WireInvitation};
use super::session::Session;

/// The service's answer to an invitation: it repeats the invitation's fields
/// (VS-1: any may be missing).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct InvitationReceipt {
    /// `InvitationType` (1 SMS, 2 WhatsApp, 3 e-mail, 4 to 6 undocumented).
    pub invitation_type: Option<i32>,
    /// `IsoCode`.
    pub iso_code: Option<String>,
    /// `MobileNo`.
    pub mobile_no: Option<String>,
    /// `EmailAddress`.
    pub email_address: Option<String>,
    /// `Message`.
    pub message: Option<String>,
    /// `QueryStringParameter` as the service repeated it (parse it with
    /// `str::parse::<CallExperience>` if needed).
    pub query_string_parameter: Option<String>,
}

impl VideoSessionClient {
    /// An invitation to the session `session_id`, sent with the `UserToken` of
    /// `session` (borrowed: its token is never copied). Set the call
    /// experience with [`SendInvitationRequest::experience`], then
    /// [`send`](SendInvitationRequest::send) it.
    ///
    /// The experience becomes the `QueryStringParameter`; none (or an empty
    /// [`CallExperience`]) sends none. Everything was validated when the values
    /// were built, so nothing can fail before the call. Not retried.
    ///
    /// Errors to act on: [`Error::Unauthorized`] (log in again),
    /// [`Error::SessionNotFound`], [`Error::Rejected`] (with the field at fault).
    pub fn send_invitation<'a>(
        &'a self,
        session: &'a Session,
        session_id: SessionId,
        invitation: impl Into<Invitation>,
    ) -> SendInvitationRequest<'a> {
        SendInvitationRequest {
            client: self,
            session,
            session_id,
            invitation: invitation.into(),
            experience: CallExperience::new(),
        }
    }
}

/// An invitation, built by [`VideoSessionClient::send_invitation`];
/// [`send`](Self::send) it.
#[derive(Debug)]
#[must_use = "an invitation request does nothing until .send() is awaited"]
pub struct SendInvitationRequest<'a> {
    client: &'a VideoSessionClient,
    session: &'a Session,
    session_id: SessionId,
    invitation: Invitation,
    experience: CallExperience,
}

impl SendInvitationRequest<'_> {
    /// The call experience (microphone, camera, observer, platform) sent as
    /// the `QueryStringParameter`. Default: none.
    pub fn experience(mut self, experience: CallExperience) -> Self {
        self.experience = experience;
        self
    }

    /// Sends the invitation and returns the service's receipt.
    pub async fn send(self) -> Result<InvitationReceipt, Error> {
        let SendInvitationRequest {
            client,
            session,
            session_id,
            invitation,
            experience,
        } = self;
        let body = to_generated(invitation.to_wire(&experience))?;
        tracing::info!(
            session_id = %session_id,
            channel = invitation.channel(),
            invitation_type = invitation.invitation_type(),
            "sending invitation"
        );
        let token = session.user_token().expose_secret();
        let (result, answer) = sa360_video_client_support::last_answer::scope(
            client
                .api
                .send_session_invitation()
                .session_id(session_id.as_str())
                .user_token(token)
                .body(body)
                .send(),
        )
        .await;
        match result {
            Ok(answer) => {
                let r = answer.into_inner();
                tracing::info!(session_id = %session_id, "invitation sent");
                Ok(InvitationReceipt {
                    invitation_type: r.invitation_type.map(i32::from),
                    iso_code: r.iso_code.map(String::from),
                    mobile_no: r.mobile_no.map(String::from),
                    email_address: r.email_address.map(String::from),
                    message: r.message.map(String::from),
                    query_string_parameter: r.query_string_parameter.map(String::from),
                })
            }
            Err(video_session_client::Error::ErrorResponse(answer)) => {
                let status = answer.status().as_u16();
                let body = answer.into_inner();
                let error = match (status, body.code.as_str()) {
                    (401, _) | (_, "Unauthorized") => Error::Unauthorized,
                    (404, _) | (_, "SessionNotFound") => Error::SessionNotFound {
                        session_id: session_id.as_str().to_owned(),
                    },
                    _ => rejected(status, body, &[token]),
                };
                tracing::info!(session_id = %session_id, error = %error, "invitation failed");
                Err(error)
            }
            Err(other) => {
                let error =
                    transport_error(other, &[token], OP_INVITATION, client.timeouts, answer);
                tracing::info!(session_id = %session_id, error = %error, "invitation failed");
                Err(error)
            }
        }
    }
}

/// The generated request type; the values were validated already, so a
/// failure here means the SDK and the spec disagree.
fn to_generated(w: WireInvitation) -> Result<types::InvitationRequest, Error> {
    let field = |name: &'static str| {
        move |e: types::error::ConversionError| {
            Error::Validation(ValidationError::new(name, e.to_string()))
        }
    };
    let invitation_type = i32::try_from(w.invitation_type)
        .ok()
        .and_then(|t| types::InvitationType::try_from(t).ok())
        .ok_or_else(|| {
            Error::Validation(ValidationError::new("InvitationType", "must be 1 to 6"))
        })?;
    Ok(types::InvitationRequest {
        invitation_type,
        iso_code: w.iso_code.map(types::IsoCode),
        mobile_no: w.mobile_no.map(types::MobileNo),
        email_address: w
            .email_address
            .map(types::EmailAddress::try_from)
            .transpose()
            .map_err(field("EmailAddress"))?,
        message: w
            .message
            .map(types::InvitationMessage::try_from)
            .transpose()
            .map_err(field("Message"))?,
        query_string_parameter: w.query_string_parameter.map(types::QueryStringParameter),
    })
}
